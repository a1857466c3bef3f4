//! `scalingModifiers.formula`: the part of expr-lang/expr (the language KEDA
//! compiles formulas with) that formulas over trigger values use.
//!
//! Why our own parser: the Rust evaluators on crates.io (evalexpr, fasteval,
//! meval) differ from expr-lang where formulas notice: evalexpr divides
//! integers as integers (`3 / 2` is 1, expr-lang says 1.5) and has no
//! `c ? a : b` or `??`; fasteval and meval have no ternary, `??` or
//! booleans. KEDA's formulas need numbers, `+ - * / % **`, comparisons,
//! `and or not` (and `&& || !`), `c ? a : b`, `a ?? b` (a failed trigger is
//! nil under fallback behavior `scalingModifiers`) and a few functions: a
//! few hundred lines, tested here against expr-lang's documented results.

use std::collections::BTreeMap;

/// Why a formula does not parse or evaluate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FormulaError {
    /// The text is not a formula (position in characters).
    #[error("at {at}: {message}")]
    Syntax { at: usize, message: String },
    /// A name is not a trigger of the ScaledObject.
    #[error("unknown name {0:?} (the formula may use the triggers' names)")]
    UnknownName(String),
    /// An operation on values of the wrong kind (`true + 1`).
    #[error("{0}")]
    Type(String),
}

/// A parsed formula.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Number(f64),
    Bool(bool),
    Nil,
    Name(String),
    Unary(char, Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Coalesce,
}

/// A value during evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Val {
    Num(f64),
    Bool(bool),
    Nil,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Sym(&'static str),
}

fn lex(text: &str) -> Result<Vec<(usize, Tok)>, FormulaError> {
    const SYMS: [&str; 22] = [
        "**", "??", "==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "^", "<", ">",
        "!", "?", ":", "(", ")", ",",
    ];
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || chars[i] == '.'
                    || chars[i] == '_'
                    || ((chars[i] == '+' || chars[i] == '-') && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            let n = word.parse::<f64>().map_err(|_| FormulaError::Syntax {
                at: start,
                message: format!("{word:?} is not a number"),
            })?;
            out.push((start, Tok::Num(n)));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((start, Tok::Ident(chars[start..i].iter().collect())));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let sym = SYMS.iter().find(|s| rest.starts_with(**s)).ok_or_else(|| {
                FormulaError::Syntax {
                    at: i,
                    message: format!("unexpected {c:?}"),
                }
            })?;
            out.push((i, Tok::Sym(sym)));
            i += sym.chars().count();
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    len: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(_, t)| t)
    }

    fn at(&self) -> usize {
        self.toks.get(self.pos).map_or(self.len, |(a, _)| *a)
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, FormulaError> {
        Err(FormulaError::Syntax {
            at: self.at(),
            message: message.into(),
        })
    }

    fn eat_sym(&mut self, sym: &str) -> bool {
        if self.peek() == Some(&Tok::Sym(match_sym(sym))) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(w)) if w == word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, sym: &str) -> Result<(), FormulaError> {
        if self.eat_sym(sym) {
            Ok(())
        } else {
            self.error(format!("expected {sym:?}"))
        }
    }

    fn ternary(&mut self) -> Result<Expr, FormulaError> {
        let cond = self.coalesce()?;
        if self.eat_sym("?") {
            let yes = self.ternary()?;
            self.expect(":")?;
            let no = self.ternary()?;
            return Ok(Expr::Ternary(Box::new(cond), Box::new(yes), Box::new(no)));
        }
        Ok(cond)
    }

    fn coalesce(&mut self) -> Result<Expr, FormulaError> {
        let mut left = self.or()?;
        while self.eat_sym("??") {
            let right = self.or()?;
            left = Expr::Binary(Op::Coalesce, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn or(&mut self) -> Result<Expr, FormulaError> {
        let mut left = self.and()?;
        while self.eat_sym("||") || self.eat_word("or") {
            let right = self.and()?;
            left = Expr::Binary(Op::Or, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, FormulaError> {
        let mut left = self.compare()?;
        while self.eat_sym("&&") || self.eat_word("and") {
            let right = self.compare()?;
            left = Expr::Binary(Op::And, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn compare(&mut self) -> Result<Expr, FormulaError> {
        let mut left = self.additive()?;
        loop {
            let op = [
                ("==", Op::Eq),
                ("!=", Op::Ne),
                ("<=", Op::Le),
                (">=", Op::Ge),
                ("<", Op::Lt),
                (">", Op::Gt),
            ]
            .into_iter()
            .find(|(s, _)| self.eat_sym(s));
            let Some((_, op)) = op else { return Ok(left) };
            let right = self.additive()?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn additive(&mut self) -> Result<Expr, FormulaError> {
        let mut left = self.multiplicative()?;
        loop {
            let op = if self.eat_sym("+") {
                Op::Add
            } else if self.eat_sym("-") {
                Op::Sub
            } else {
                return Ok(left);
            };
            let right = self.multiplicative()?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, FormulaError> {
        let mut left = self.unary()?;
        loop {
            let op = if self.eat_sym("*") {
                Op::Mul
            } else if self.eat_sym("/") {
                Op::Div
            } else if self.eat_sym("%") {
                Op::Mod
            } else {
                return Ok(left);
            };
            let right = self.unary()?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, FormulaError> {
        if self.eat_sym("-") {
            return Ok(Expr::Unary('-', Box::new(self.unary()?)));
        }
        if self.eat_sym("+") {
            return self.unary();
        }
        if self.eat_sym("!") || self.eat_word("not") {
            return Ok(Expr::Unary('!', Box::new(self.unary()?)));
        }
        self.power()
    }

    fn power(&mut self) -> Result<Expr, FormulaError> {
        let base = self.primary()?;
        if self.eat_sym("**") || self.eat_sym("^") {
            // Right-associative, binding tighter than unary minus on its right.
            let exp = self.unary()?;
            return Ok(Expr::Binary(Op::Pow, Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<Expr, FormulaError> {
        let Some((_, tok)) = self.toks.get(self.pos).cloned() else {
            return self.error("unexpected end of formula");
        };
        self.pos += 1;
        match tok {
            Tok::Num(n) => Ok(Expr::Number(n)),
            Tok::Sym("(") => {
                let e = self.ternary()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Ident(w) => match w.as_str() {
                "true" => Ok(Expr::Bool(true)),
                "false" => Ok(Expr::Bool(false)),
                "nil" => Ok(Expr::Nil),
                _ if self.eat_sym("(") => {
                    let mut args = Vec::new();
                    if !self.eat_sym(")") {
                        loop {
                            args.push(self.ternary()?);
                            if self.eat_sym(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    Ok(Expr::Call(w, args))
                }
                _ => Ok(Expr::Name(w)),
            },
            Tok::Sym(s) => {
                self.pos -= 1;
                self.error(format!("unexpected {s:?}"))
            }
        }
    }
}

fn match_sym(sym: &str) -> &'static str {
    const ALL: [&str; 22] = [
        "**", "??", "==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "^", "<", ">",
        "!", "?", ":", "(", ")", ",",
    ];
    ALL.into_iter().find(|s| *s == sym).unwrap_or("")
}

impl Expr {
    /// Parses a formula.
    pub fn parse(text: &str) -> Result<Self, FormulaError> {
        let toks = lex(text)?;
        let mut p = Parser {
            toks,
            pos: 0,
            len: text.chars().count(),
        };
        let e = p.ternary()?;
        if p.pos < p.toks.len() {
            return p.error("unexpected text after the formula");
        }
        Ok(e)
    }

    /// The names the formula reads.
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Name(n) = e {
                out.push(n.clone());
            }
        });
        out
    }

    fn walk(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Unary(_, a) => a.walk(f),
            Expr::Binary(_, a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::Ternary(a, b, c) => {
                a.walk(f);
                b.walk(f);
                c.walk(f);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.walk(f)),
            _ => {}
        }
    }

    /// Evaluates with trigger values (`None`: the trigger is nil).
    pub fn eval(&self, env: &BTreeMap<String, Option<f64>>) -> Result<Val, FormulaError> {
        Ok(match self {
            Expr::Number(n) => Val::Num(*n),
            Expr::Bool(b) => Val::Bool(*b),
            Expr::Nil => Val::Nil,
            Expr::Name(n) => match env.get(n) {
                Some(Some(v)) => Val::Num(*v),
                Some(None) => Val::Nil,
                None => return Err(FormulaError::UnknownName(n.clone())),
            },
            Expr::Unary('-', a) => Val::Num(-num(a.eval(env)?, "-")?),
            Expr::Unary(_, a) => Val::Bool(!boolean(a.eval(env)?, "not")?),
            Expr::Ternary(c, a, b) => {
                if boolean(c.eval(env)?, "?:")? {
                    a.eval(env)?
                } else {
                    b.eval(env)?
                }
            }
            Expr::Binary(Op::Coalesce, a, b) => match a.eval(env)? {
                Val::Nil => b.eval(env)?,
                v => v,
            },
            Expr::Binary(Op::And, a, b) => {
                Val::Bool(boolean(a.eval(env)?, "and")? && boolean(b.eval(env)?, "and")?)
            }
            Expr::Binary(Op::Or, a, b) => {
                Val::Bool(boolean(a.eval(env)?, "or")? || boolean(b.eval(env)?, "or")?)
            }
            Expr::Binary(Op::Eq, a, b) => Val::Bool(a.eval(env)? == b.eval(env)?),
            Expr::Binary(Op::Ne, a, b) => Val::Bool(a.eval(env)? != b.eval(env)?),
            Expr::Binary(op, a, b) => {
                let sym = format!("{op:?}");
                let (x, y) = (num(a.eval(env)?, &sym)?, num(b.eval(env)?, &sym)?);
                match op {
                    Op::Add => Val::Num(x + y),
                    Op::Sub => Val::Num(x - y),
                    Op::Mul => Val::Num(x * y),
                    Op::Div => Val::Num(x / y),
                    Op::Mod => Val::Num(x % y),
                    Op::Pow => Val::Num(x.powf(y)),
                    Op::Lt => Val::Bool(x < y),
                    Op::Le => Val::Bool(x <= y),
                    Op::Gt => Val::Bool(x > y),
                    _ => Val::Bool(x >= y),
                }
            }
            Expr::Call(f, args) => {
                let vals = args
                    .iter()
                    .map(|a| num(a.eval(env)?, f))
                    .collect::<Result<Vec<_>, _>>()?;
                call(f, &vals)?
            }
        })
    }

    /// Evaluates to the composite metric's value (a number, as KEDA's
    /// compiled formula must return).
    pub fn value(&self, env: &BTreeMap<String, Option<f64>>) -> Result<f64, FormulaError> {
        match self.eval(env)? {
            Val::Num(n) => Ok(n),
            other => Err(FormulaError::Type(format!(
                "the formula gives {other:?}, not a number"
            ))),
        }
    }
}

fn num(v: Val, op: &str) -> Result<f64, FormulaError> {
    match v {
        Val::Num(n) => Ok(n),
        other => Err(FormulaError::Type(format!(
            "{op} needs numbers, not {other:?}"
        ))),
    }
}

fn boolean(v: Val, op: &str) -> Result<bool, FormulaError> {
    match v {
        Val::Bool(b) => Ok(b),
        other => Err(FormulaError::Type(format!(
            "{op} needs a boolean, not {other:?}"
        ))),
    }
}

fn call(f: &str, a: &[f64]) -> Result<Val, FormulaError> {
    let one = || {
        a.first()
            .copied()
            .filter(|_| a.len() == 1)
            .ok_or_else(|| FormulaError::Type(format!("{f}() takes one argument, not {}", a.len())))
    };
    Ok(Val::Num(match f {
        "abs" => one()?.abs(),
        "ceil" => one()?.ceil(),
        "floor" => one()?.floor(),
        // expr-lang rounds half away from zero, as Rust's round does.
        "round" => one()?.round(),
        "float" => one()?,
        "int" => one()?.trunc(),
        "min" | "max" if !a.is_empty() => {
            let pick = if f == "min" { f64::min } else { f64::max };
            a.iter().copied().fold(a[0], pick)
        }
        _ => {
            return Err(FormulaError::Type(format!(
                "unknown function {f}() (known: abs, ceil, floor, round, float, int, min, max)"
            )));
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, env: &[(&str, Option<f64>)]) -> Result<Val, FormulaError> {
        let env = env.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect();
        Expr::parse(text)?.eval(&env)
    }

    #[test]
    fn formulas_evaluate_as_expr_lang_does() {
        let env = [
            ("queue", Some(30.0)),
            ("backlog", Some(10.0)),
            ("gone", None),
        ];
        let cases: &[(&str, Val)] = &[
            ("(queue + backlog) / 2", Val::Num(20.0)),
            // expr-lang's `/` is always a float division.
            ("3 / 2", Val::Num(1.5)),
            ("queue > 20 ? queue : backlog", Val::Num(30.0)),
            ("queue < 20 ? queue : backlog", Val::Num(10.0)),
            ("gone ?? 5", Val::Num(5.0)),
            ("queue ?? 5", Val::Num(30.0)),
            ("2 ** 3 ** 2", Val::Num(512.0)),
            ("-2 ** 2", Val::Num(-4.0)),
            ("2 ^ 3", Val::Num(8.0)),
            ("1 + 2 * 3 - 4", Val::Num(3.0)),
            ("7 % 4", Val::Num(3.0)),
            ("max(queue, backlog, 50)", Val::Num(50.0)),
            ("min(queue, backlog)", Val::Num(10.0)),
            ("ceil(queue / 7)", Val::Num(5.0)),
            ("queue >= 30 and not (backlog > 10)", Val::Bool(true)),
            ("queue == 30 || false", Val::Bool(true)),
            ("1e3 + 0.5", Val::Num(1000.5)),
        ];
        for (text, want) in cases {
            assert_eq!(eval(text, &env), Ok(*want), "{text}");
        }
    }

    #[test]
    fn bad_formulas_say_where() {
        assert!(matches!(
            Expr::parse("(a + "),
            Err(FormulaError::Syntax { .. })
        ));
        assert!(matches!(
            Expr::parse("a $ b"),
            Err(FormulaError::Syntax { at: 2, .. })
        ));
        assert_eq!(
            eval("queue + 1", &[]),
            Err(FormulaError::UnknownName("queue".to_owned()))
        );
        assert!(matches!(eval("true + 1", &[]), Err(FormulaError::Type(_))));
        assert!(
            Expr::parse("1 > 0")
                .unwrap()
                .value(&BTreeMap::new())
                .is_err()
        );
    }

    #[test]
    fn names_are_the_triggers_read() {
        let e = Expr::parse("a > 1 ? max(b, 2) : c ?? 0").unwrap();
        assert_eq!(e.names(), ["a", "b", "c"]);
    }
}
