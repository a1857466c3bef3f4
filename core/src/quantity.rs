//! Kubernetes resource quantities (`500m`, `2Gi`, `1e3`, `123456n`), exactly.
//!
//! One definition for the whole workspace: the controller reads metric values
//! and requests through it, the fake metrics server writes them with it.
//! Semantics follow apimachinery `resource.Quantity` (Kubernetes v1.36):
//! `MilliValue()` rounds away from zero, canonical strings are rounded up to
//! nano precision, and the format (`DecimalSI`, `BinarySI`, `DecimalExponent`)
//! is remembered from the suffix so that `String()` round-trips.
//!
//! The value is kept as `mantissa × 10^exponent` with an `i128` mantissa:
//! every realistic quantity is exact, and binary suffixes are folded into the
//! mantissa (`1.5Gi` = `15 × 2^30 × 10^-1`).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a quantity string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The input was the empty string.
    #[error("quantity is empty")]
    Empty,
    /// The input does not follow the quantity grammar.
    #[error("quantity {input:?} is not valid: {reason}")]
    Invalid {
        /// The offending text.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The number does not fit the exact representation (more than ~38 digits).
    #[error("quantity {input:?} has too many significant digits")]
    TooLarge {
        /// The offending text.
        input: String,
    },
    /// A negative quantity where only non-negative ones are allowed.
    #[error("quantity {input:?} must not be negative")]
    Negative {
        /// The offending text.
        input: String,
    },
}

/// How a quantity is written back, as in apimachinery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Format {
    /// Powers of ten with SI suffixes: `500m`, `1k`, `2M`.
    DecimalSI,
    /// Powers of 1024: `1Ki`, `2Gi` (falls back to DecimalSI when inexact).
    BinarySI,
    /// Scientific: `1e3`, `5e-3`.
    DecimalExponent,
}

/// An exact Kubernetes quantity.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    mantissa: i128,
    exponent: i32,
    format: Format,
}

/// Exponents beyond this are refused (too large): such values would
/// saturate every integer accessor anyway, and refusing keeps `10^n`
/// arithmetic bounded without silently changing a value (clamping made
/// `100.e30002` read as `1e10002`, which the fuzzer found).
const MAX_EXPONENT: i32 = 10_000;

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

fn saturate(negative: bool) -> i128 {
    if negative { i128::MIN } else { i128::MAX }
}

impl Quantity {
    /// Parses a quantity string (`[+-]digits[.digits][suffix]`).
    pub fn parse(input: &str) -> Result<Self, QuantityError> {
        if input.is_empty() {
            return Err(QuantityError::Empty);
        }
        let invalid = |reason| QuantityError::Invalid {
            input: input.to_owned(),
            reason,
        };
        let too_large = || QuantityError::TooLarge {
            input: input.to_owned(),
        };
        let bytes = input.as_bytes();
        let mut i = 0;
        let mut negative = false;
        if let Some(&c) = bytes.first()
            && (c == b'+' || c == b'-')
        {
            negative = c == b'-';
            i = 1;
        }
        let int_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let int_digits = &input[int_start..i];
        let mut frac_digits = "";
        if i < bytes.len() && bytes[i] == b'.' {
            i += 1;
            let frac_start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            frac_digits = &input[frac_start..i];
        }
        if int_digits.is_empty() && frac_digits.is_empty() {
            return Err(invalid("expected a number"));
        }
        let suffix = &input[i..];
        let (format, suffix_exp, binary_power) = parse_suffix(suffix).ok_or_else(|| {
            invalid("unknown suffix (expected one of n u m k M G T P E Ki Mi Gi Ti Pi Ei or e<N>)")
        })?;

        // Trailing zeros of the fraction carry no value; dropping them keeps
        // long inputs like "1.000000000000000000000000000000000000000" exact.
        let frac_digits = frac_digits.trim_end_matches('0');
        let mut mantissa: i128 = 0;
        for d in int_digits.bytes().chain(frac_digits.bytes()) {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(i128::from(d - b'0')))
                .ok_or_else(too_large)?;
        }
        if binary_power > 0 {
            let factor = 1024i128.pow(binary_power);
            mantissa = mantissa.checked_mul(factor).ok_or_else(too_large)?;
        }
        if negative {
            mantissa = -mantissa;
        }
        let frac_len = i32::try_from(frac_digits.len()).map_err(|_| too_large())?;
        let exponent = suffix_exp.saturating_sub(frac_len);
        let q = Self {
            mantissa,
            exponent,
            format,
        }
        .normalized();
        // Checked after normalization: `100e10000` is `1e10002`, which must
        // be refused as its printed form would be.
        if !(-MAX_EXPONENT..=MAX_EXPONENT).contains(&q.exponent) {
            return Err(too_large());
        }
        Ok(q)
    }

    /// Parses and refuses negative values (requests, targets, tolerances).
    pub fn parse_non_negative(input: &str) -> Result<Self, QuantityError> {
        let q = Self::parse(input)?;
        if q.is_negative() {
            return Err(QuantityError::Negative {
                input: input.to_owned(),
            });
        }
        Ok(q)
    }

    /// `value / 1000` in the given format (apimachinery `NewMilliQuantity`).
    pub fn from_milli(milli: i64, format: Format) -> Self {
        Self {
            mantissa: i128::from(milli),
            exponent: -3,
            format,
        }
        .normalized()
    }

    /// A whole number in the given format (apimachinery `NewQuantity`).
    pub fn from_int(value: i64, format: Format) -> Self {
        Self {
            mantissa: i128::from(value),
            exponent: 0,
            format,
        }
        .normalized()
    }

    /// `value × 10^-9` in the given format (apimachinery `NewScaledQuantity(v, Nano)`).
    pub fn from_nano(nano: i64, format: Format) -> Self {
        Self {
            mantissa: i128::from(nano),
            exponent: -9,
            format,
        }
        .normalized()
    }

    /// The format used when writing the quantity back.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The same value written in another format.
    pub fn with_format(self, format: Format) -> Self {
        Self { format, ..self }
    }

    /// True when the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.mantissa < 0
    }

    /// True when the value is exactly zero.
    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// `ceil(value / 10^scale)` rounding away from zero, saturating at the
    /// `i128` range (apimachinery `ScaledValue`).
    pub fn scaled_value_i128(&self, scale: i32) -> i128 {
        let shift = i64::from(self.exponent) - i64::from(scale);
        let negative = self.mantissa < 0;
        if self.mantissa == 0 {
            return 0;
        }
        if shift >= 0 {
            let Some(factor) = u32::try_from(shift).ok().and_then(pow10) else {
                return saturate(negative);
            };
            self.mantissa
                .checked_mul(factor)
                .unwrap_or_else(|| saturate(negative))
        } else {
            let Some(divisor) = u32::try_from(-shift).ok().and_then(pow10) else {
                // |mantissa| < 10^39 <= divisor: the result rounds away from zero to ±1.
                return if negative { -1 } else { 1 };
            };
            let q = self.mantissa / divisor;
            if self.mantissa % divisor == 0 {
                q
            } else if negative {
                q - 1
            } else {
                q + 1
            }
        }
    }

    /// `ceil(value / 10^scale)` rounding away from zero, saturating at the `i64` range.
    pub fn scaled_value(&self, scale: i32) -> i64 {
        let v = self.scaled_value_i128(scale);
        i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
    }

    /// Thousandths, rounded away from zero, saturating (apimachinery `MilliValue`).
    pub fn milli_value(&self) -> i64 {
        self.scaled_value(-3)
    }

    /// apimachinery's `MilliValue` as Kubernetes through 1.37 computes it
    /// for this quantity's canonical wire form (`100E`, `500m`): the same
    /// as [`milli_value`](Self::milli_value) within the `i64` range, and
    /// beyond it what Go returns (1.38 saturates, k/k #141305).
    ///
    /// A canonical form with at most 18 digits parses to an `int64Amount`
    /// (digits, a scale that is a multiple of 3); `MilliValue` scales it by
    /// `10^(scale + 3)` in `positiveScaleInt64`, which for 10^3, 10^6 and
    /// 10^9 multiplies once and returns the wrapped product, and for other
    /// powers multiplies by ten in a loop and returns 0 on overflow. More
    /// digits take the `inf.Dec` path, whose `big.Int.Int64()` keeps the
    /// low 64 bits of the magnitude, then the sign.
    pub fn go_milli_value_through_1_37(&self) -> i64 {
        let exact = self.scaled_value_i128(-3);
        if let Ok(v) = i64::try_from(exact) {
            return v;
        }
        let negative = self.mantissa < 0;
        let e = i64::from(self.exponent);
        let scale = e.div_euclid(3) * 3;
        let digits =
            pow10(u32::try_from(e - scale).unwrap_or(0)).and_then(|f| self.mantissa.checked_mul(f));
        if let Some(value) = digits
            && value.unsigned_abs() < 1_000_000_000_000_000_000
            && scale >= -9
        {
            // `value` has at most 18 digits: an int64Amount.
            let value = value as i64;
            return match scale + 3 {
                d @ (3 | 6 | 9) => value.wrapping_mul(10i64.pow(d as u32)),
                _ => 0,
            };
        }
        // inf.Dec: |mantissa| * 10^(exponent + 3), low 64 bits, then the sign.
        // Truncating to the low 64 bits is the point: they are all that
        // `Int64()` keeps of the product.
        let mut low = self.mantissa.unsigned_abs() as u64;
        for _ in 0..(e + 3).max(0) {
            low = low.wrapping_mul(10);
        }
        let v = low as i64;
        if negative { v.wrapping_neg() } else { v }
    }

    /// Billionths, rounded away from zero, saturating.
    pub fn nano_value(&self) -> i64 {
        self.scaled_value(-9)
    }

    /// The value rounded away from zero to an integer, saturating (apimachinery `Value`).
    pub fn value(&self) -> i64 {
        self.scaled_value(0)
    }

    /// The value as a float (apimachinery `AsApproximateFloat64`).
    pub fn as_f64(&self) -> f64 {
        // i128 -> f64 is the intended approximation here.
        #[allow(
            clippy::cast_precision_loss,
            reason = "an approximation is what is asked for"
        )]
        let m = self.mantissa as f64;
        m * 10f64.powi(self.exponent)
    }

    /// The canonical string apimachinery's `String()` writes.
    pub fn to_canonical_string(&self) -> String {
        // Precision below nano is rounded up first, as apimachinery does.
        let (mantissa, exponent) = if self.exponent < -9 {
            (self.scaled_value_i128(-9), -9)
        } else {
            (self.mantissa, self.exponent)
        };
        if mantissa == 0 {
            return "0".to_owned();
        }
        let mut format = self.format;
        if format == Format::BinarySI {
            match integral_value(mantissa, exponent) {
                Some(v) if !(-1024 < v && v < 1024) => return format_binary(v),
                _ => format = Format::DecimalSI,
            }
        }
        format_decimal(mantissa, exponent, format)
    }

    fn normalized(self) -> Self {
        if self.mantissa == 0 {
            return Self {
                mantissa: 0,
                exponent: 0,
                format: self.format,
            };
        }
        let mut m = self.mantissa;
        let mut e = self.exponent;
        while m % 10 == 0 {
            let Some(next) = e.checked_add(1) else { break };
            m /= 10;
            e = next;
        }
        Self {
            mantissa: m,
            exponent: e,
            format: self.format,
        }
    }
}

/// `(format, decimal exponent, power of 1024)` for a suffix.
fn parse_suffix(suffix: &str) -> Option<(Format, i32, u32)> {
    let decimal = |e| Some((Format::DecimalSI, e, 0));
    let binary = |p| Some((Format::BinarySI, 0, p));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(1),
        "Mi" => binary(2),
        "Gi" => binary(3),
        "Ti" => binary(4),
        "Pi" => binary(5),
        "Ei" => binary(6),
        _ => {
            let rest = suffix
                .strip_prefix('e')
                .or_else(|| suffix.strip_prefix('E'))?;
            let digits = rest
                .strip_prefix('-')
                .or_else(|| rest.strip_prefix('+'))
                .unwrap_or(rest);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            // Like apimachinery, an exponent outside the int32 range is refused;
            // large ones inside it saturate every accessor anyway.
            let exp = rest.parse::<i32>().ok().filter(|e| *e != i32::MIN)?;
            Some((Format::DecimalExponent, exp, 0))
        }
    }
}

/// The exact integer value, if the quantity is integral and fits.
fn integral_value(mantissa: i128, exponent: i32) -> Option<i128> {
    if exponent >= 0 {
        mantissa.checked_mul(pow10(u32::try_from(exponent).ok()?)?)
    } else {
        let d = pow10(exponent.unsigned_abs())?;
        (mantissa % d == 0).then_some(mantissa / d)
    }
}

fn format_binary(mut v: i128) -> String {
    let mut power = 0;
    while power < 6 && v % 1024 == 0 {
        v /= 1024;
        power += 1;
    }
    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
    format!("{v}{suffix}")
}

fn format_decimal(mut mantissa: i128, mut exponent: i32, format: Format) -> String {
    while mantissa % 10 == 0 {
        mantissa /= 10;
        exponent += 1;
    }
    let r = exponent.rem_euclid(3);
    if let Some(m) = pow10(r.unsigned_abs()).and_then(|f| mantissa.checked_mul(f)) {
        mantissa = m;
        exponent -= r;
    }
    let suffix = match (format, exponent) {
        (_, 0) => String::new(),
        (Format::DecimalSI | Format::BinarySI, -9) => "n".to_owned(),
        (Format::DecimalSI | Format::BinarySI, -6) => "u".to_owned(),
        (Format::DecimalSI | Format::BinarySI, -3) => "m".to_owned(),
        (Format::DecimalSI | Format::BinarySI, 3) => "k".to_owned(),
        (Format::DecimalSI | Format::BinarySI, 6) => "M".to_owned(),
        (Format::DecimalSI | Format::BinarySI, 9) => "G".to_owned(),
        (Format::DecimalSI | Format::BinarySI, 12) => "T".to_owned(),
        (Format::DecimalSI | Format::BinarySI, 15) => "P".to_owned(),
        (Format::DecimalSI | Format::BinarySI, 18) => "E".to_owned(),
        (_, e) => format!("e{e}"),
    };
    format!("{mantissa}{suffix}")
}

/// The status average value upstream writes for a metric (`buildQuantity` in
/// `horizontal.go`): memory as whole bytes in BinarySI, everything else as
/// milli-units in DecimalSI.
pub fn build_quantity(resource_name: &str, raw_milli: i64) -> Quantity {
    if resource_name == "memory" {
        Quantity::from_int(raw_milli / 1000, Format::BinarySI)
    } else {
        Quantity::from_milli(raw_milli, Format::DecimalSI)
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    /// Compares values exactly, whatever the format.
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.normalized(), other.normalized());
        match a.mantissa.signum().cmp(&b.mantissa.signum()) {
            Ordering::Equal => {}
            o => return o,
        }
        if a.mantissa == 0 {
            return Ordering::Equal;
        }
        // Same sign: scale the one with the larger exponent up to the other.
        let (hi, lo, flipped) = if a.exponent >= b.exponent {
            (a, b, false)
        } else {
            (b, a, true)
        };
        let diff = u32::try_from(i64::from(hi.exponent) - i64::from(lo.exponent)).ok();
        let scaled = diff
            .and_then(pow10)
            .and_then(|f| hi.mantissa.checked_mul(f));
        let ord = match scaled {
            Some(h) => h.cmp(&lo.mantissa),
            // Overflow means |hi| is beyond any i128 mantissa.
            None if hi.mantissa > 0 => Ordering::Greater,
            None => Ordering::Less,
        };
        if flipped { ord.reverse() } else { ord }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_canonical_string())
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<&k8s_openapi::apimachinery::pkg::api::resource::Quantity> for Quantity {
    type Error = QuantityError;
    fn try_from(
        q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    ) -> Result<Self, Self::Error> {
        Self::parse(&q.0)
    }
}

impl From<Quantity> for k8s_openapi::apimachinery::pkg::api::resource::Quantity {
    fn from(q: Quantity) -> Self {
        Self(q.to_canonical_string())
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_canonical_string())
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// Milli-value of a wire quantity, or an error naming the field it came from.
pub fn milli_of(
    q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
) -> Result<i64, QuantityError> {
    Quantity::parse(&q.0).map(|q| q.milli_value())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn parses_every_suffix_form_to_the_right_milli_value() {
        let cases = [
            ("500m", 500),
            ("1", 1000),
            ("1.5", 1500),
            ("2Gi", 2 * 1024 * 1024 * 1024 * 1000),
            ("1k", 1_000_000),
            ("1e3", 1_000_000),
            ("1E3", 1_000_000),
            ("123456n", 1),
            ("123456000n", 124),
            ("+2", 2000),
            ("-2", -2000),
            ("-1n", -1),
            (".5", 500),
            ("1.", 1000),
            ("0.01", 10),
            ("15.0", 15000),
            ("6666m", 6666),
            ("1Ki", 1_024_000),
            ("1E", 1_000_000_000_000_000_000i64.saturating_mul(1000)),
            ("5e-3", 5),
            ("100u", 1),
        ];
        for (s, want) in cases {
            assert_eq!(q(s).milli_value(), want, "{s}");
        }
    }

    #[test]
    fn nano_values_are_exact_for_cpu_usage() {
        assert_eq!(q("123456n").nano_value(), 123_456);
        assert_eq!(q("250m").nano_value(), 250_000_000);
    }

    #[test]
    fn huge_values_saturate_instead_of_wrapping() {
        assert_eq!(q("1e30").milli_value(), i64::MAX);
        assert_eq!(q("-1e30").milli_value(), i64::MIN);
        assert_eq!(q("9223372036854775807").milli_value(), i64::MAX);
        assert_eq!(q("1e-100").milli_value(), 1);
    }

    /// What apimachinery's `MilliValue` returns through 1.37, worked out
    /// from `positiveScaleInt64`, `int64Multiply` and `big.Int.Int64()`.
    #[test]
    fn milli_values_beyond_int64_read_as_go_read_them_through_1_37() {
        for (text, expected) in [
            ("500m", 500),
            ("1", 1000),
            ("9223372036854775", 9_223_372_036_854_775_000),
            // int64Amount{100, 18}: 10^21 is multiplied in a loop, which
            // stops at the overflow and returns 0 (KEDA's trigger at 1e20).
            ("100E", 0),
            ("1e20", 0),
            ("-100E", 0),
            ("1e30", 0),
            // int64Amount{9223372036854776, 0}: one multiplication by 1000,
            // wrapped, returned anyway.
            (
                "9223372036854776",
                9_223_372_036_854_776_000_i128.wrapping_sub(1 << 64) as i64,
            ),
            (
                "9223372036854776k",
                9_223_372_036_854_776_i64.wrapping_mul(1_000_000),
            ),
            // 19 digits: inf.Dec; (2^63 - 1) * 1000 keeps -1000 in its low 64 bits.
            ("9223372036854775807", -1000),
            ("1e-100", 1),
        ] {
            assert_eq!(q(text).go_milli_value_through_1_37(), expected, "{text}");
        }
        // From 1.38 the same values saturate.
        assert_eq!(q("100E").milli_value(), i64::MAX);
    }

    #[test]
    fn refuses_malformed_input_with_the_input_in_the_message() {
        for s in [
            "", "abc", "1.2.3", "1x", "m", "1 ", " 1", "--1", "1e", "1Kib", ".",
        ] {
            let err = Quantity::parse(s).unwrap_err();
            if !s.is_empty() {
                assert!(err.to_string().contains(&format!("{s:?}")), "{err}");
            }
        }
        let err = Quantity::parse_non_negative("-1").unwrap_err();
        assert_eq!(err, QuantityError::Negative { input: "-1".into() });
        let err = Quantity::parse("1".repeat(50).as_str()).unwrap_err();
        assert!(matches!(err, QuantityError::TooLarge { .. }));
    }

    #[test]
    fn a_quantity_finer_than_a_nano_prints_rounded_up_and_reparses_to_a_fixed_point() {
        // Found by the `quantity` fuzz target: "0.000000001n" (1e-18) prints
        // as "1n", as Go's canonical form rounds up to the nano, so printing
        // is not an exact round trip below a nano; it never rounds down.
        let q = Quantity::parse("0.000000001n").unwrap();
        let printed = q.to_string();
        assert_eq!(printed, "1n");
        let again = Quantity::parse(&printed).unwrap();
        assert!(again > q);
        assert_eq!(again.to_string(), printed);
        // Exponents past the bound are refused, not clamped (fuzzer).
        assert!(Quantity::parse("100.e30002").is_err());
        assert!(Quantity::parse("1e-20000").is_err());
        // BinarySI without an exact binary suffix prints plain digits, as
        // Go's AsCanonicalBase1024Bytes; read back they are DecimalSI.
        assert_eq!(Quantity::parse("62.5Ki").unwrap().to_string(), "64000");
        assert_eq!(Quantity::parse("64000").unwrap().to_string(), "64k");
        // At the bound before normalization, past it after (fuzzer):
        // "100E010000" is 1e10002, refused as its printed form would be.
        assert!(Quantity::parse("100E010000").is_err());
        let at_bound = Quantity::parse("1e10000").unwrap();
        assert_eq!(Quantity::parse(&at_bound.to_string()).unwrap(), at_bound);
        // Away from zero for a negative one: "-.000000010n" prints "-1n".
        let neg = Quantity::parse("-.000000010n").unwrap();
        assert_eq!(neg.to_string(), "-1n");
        assert!(Quantity::parse("-1n").unwrap() < neg);
    }

    #[test]
    fn canonical_strings_match_apimachinery() {
        let cases = [
            ("500m", "500m"),
            ("1.5", "1500m"),
            ("1000", "1k"),
            ("1500", "1500"),
            ("0.1", "100m"),
            ("2Gi", "2Gi"),
            ("1536Mi", "1536Mi"),
            ("1024", "1024"),
            ("1.5Ki", "1536"),
            ("1e3", "1e3"),
            ("123456n", "123456n"),
            ("1n", "1n"),
            ("0.0000000001", "1n"),
            ("0", "0"),
            ("-0", "0"),
            ("0Gi", "0"),
            ("-500m", "-500m"),
            ("12e6", "12e6"),
            ("12000k", "12M"),
            ("100e-3", "100e-3"),
            ("1e21", "1e21"),
            ("1000E", "1e21"),
            ("0.5Ki", "512"),
        ];
        for (input, want) in cases {
            assert_eq!(q(input).to_canonical_string(), want, "{input}");
        }
    }

    #[test]
    fn build_quantity_writes_memory_as_bytes_and_others_as_milli() {
        let m = build_quantity("memory", 1_000_000);
        assert_eq!(m.format(), Format::BinarySI);
        assert_eq!(m.milli_value(), 1_000_000);
        assert_eq!(m.to_string(), "1k");
        let m = build_quantity("memory", 2_048_000);
        assert_eq!(m.to_string(), "2Ki");
        let c = build_quantity("cpu", 100);
        assert_eq!(
            (c.format(), c.to_string()),
            (Format::DecimalSI, "100m".into())
        );
    }

    #[test]
    fn comparison_is_by_value_not_spelling() {
        assert_eq!(q("1"), q("1000m"));
        assert_eq!(q("1Ki"), q("1024"));
        assert!(q("1.5") > q("1499m"));
        assert!(q("-1") < q("1n"));
        assert!(q("1e30") > q("9223372036854775807"));
    }

    #[test]
    fn serde_round_trips_through_the_canonical_string() {
        let v = serde_json::to_string(&q("1.5")).unwrap();
        assert_eq!(v, "\"1500m\"");
        let back: Quantity = serde_json::from_str(&v).unwrap();
        assert_eq!(back, q("1.5"));
    }
}
