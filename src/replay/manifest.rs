//! The manifests of a replay: the HPA (from a file that may hold many
//! documents, as `helm template` renders them) and its scale target, with
//! errors that name the file, the line and the field.

use std::path::{Path, PathBuf};

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use serde_json::{Value, json};

/// Why a manifest cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file cannot be read.
    #[error("{file}")]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A document is not YAML.
    #[error("{file}:{line}: the YAML does not parse: {reason}")]
    Yaml {
        file: PathBuf,
        line: u64,
        reason: String,
    },
    /// No HPA in the file (or none of that name).
    #[error("{file}: no HorizontalPodAutoscaler{} in the file (found: {found})", .name.as_ref().map(|n| format!(" named {n:?}")).unwrap_or_default())]
    NoHpa {
        file: PathBuf,
        name: Option<String>,
        found: String,
    },
    /// Several HPAs and no `--hpa` to choose.
    #[error("{file}: several HorizontalPodAutoscalers ({names}); choose one with --hpa NAME")]
    ManyHpas { file: PathBuf, names: String },
    /// A field has the wrong shape or is missing.
    #[error("{file}:{line}: {object}: field {field}: {reason}")]
    Field {
        file: PathBuf,
        line: u64,
        /// Kind and name (`HorizontalPodAutoscaler web`).
        object: String,
        field: String,
        reason: String,
    },
    /// The scale target is not a kind the simulated cluster runs.
    #[error(
        "{file}:{line}: HorizontalPodAutoscaler {name}: field spec.scaleTargetRef.kind: {kind:?} is not Deployment, StatefulSet or ReplicaSet"
    )]
    TargetKind {
        file: PathBuf,
        line: u64,
        name: String,
        kind: String,
    },
    /// The workload file has no object the HPA targets.
    #[error("{file}: no {kind} named {name:?}, the HPA's spec.scaleTargetRef (found: {found})")]
    NoWorkload {
        file: PathBuf,
        kind: String,
        name: String,
        found: String,
    },
}

/// One YAML document of a file, where it starts, and its content.
#[derive(Debug, Clone)]
pub struct Document {
    pub file: PathBuf,
    /// The 1-based line its text starts on.
    pub line: u64,
    pub text: String,
    pub value: Value,
}

impl Document {
    fn kind(&self) -> &str {
        self.value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    fn name(&self) -> &str {
        self.value
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    fn describe(&self) -> String {
        format!("{} {}", self.kind(), self.name())
    }

    /// The file line of a field (`spec.metrics[0].resource.name`): the
    /// first line, in order, that holds each key of the path; the
    /// document's first line when a key is not written (a missing field).
    pub fn line_of(&self, field: &str) -> u64 {
        let mut from = 0usize;
        let lines: Vec<&str> = self.text.lines().collect();
        for key in field
            .split(['.', '[', ']'])
            .filter(|k| !k.is_empty() && k.parse::<usize>().is_err())
        {
            let found = lines.iter().enumerate().skip(from).find(|(_, l)| {
                let l = l.trim_start().trim_start_matches("- ");
                l.strip_prefix(key)
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
            });
            match found {
                Some((i, _)) => from = i,
                None => break,
            }
        }
        self.line + from as u64
    }
}

/// Splits a file into its YAML documents and parses each.
pub fn documents(file: &Path) -> Result<Vec<Document>, ManifestError> {
    let text = std::fs::read_to_string(file).map_err(|source| ManifestError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    let mut chunks: Vec<(u64, String)> = vec![(1, String::new())];
    for (i, line) in text.lines().enumerate() {
        let marker = line.trim_end();
        if marker == "---" || marker.starts_with("--- ") || marker == "..." {
            chunks.push((i as u64 + 2, String::new()));
            continue;
        }
        if let Some((_, chunk)) = chunks.last_mut() {
            chunk.push_str(line);
            chunk.push('\n');
        }
    }
    let mut docs = Vec::new();
    for (line, chunk) in chunks {
        let blank = chunk
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
        if blank {
            continue;
        }
        let value: Value = serde_saphyr::from_str(&chunk).map_err(|e| ManifestError::Yaml {
            file: file.to_path_buf(),
            line: line + e.location().map_or(0, |l| l.line().saturating_sub(1)),
            reason: e.without_snippet().to_string(),
        })?;
        if value.is_null() {
            continue;
        }
        docs.push(Document {
            file: file.to_path_buf(),
            line,
            text: chunk,
            value,
        });
    }
    Ok(docs)
}

/// The HPA to replay: its document and its typed (autoscaling/v2 or v1,
/// checked) form.
#[derive(Debug, Clone)]
pub struct HpaManifest {
    pub doc: Document,
    /// `autoscaling/v2` or `autoscaling/v1`.
    pub version: &'static str,
    pub name: String,
    pub namespace: String,
    pub min_replicas: i32,
    pub target_kind: String,
    pub target_name: String,
    /// The ScaledObject whose generated HPA this is (`doc` is then the
    /// ScaledObject's document with the HPA as its value).
    pub scaled_object: Option<hpa_keda::ScaledObject>,
}

/// Finds the HPA in `file` (the one named `name` if given) and checks its
/// fields.
pub fn hpa(file: &Path, name: Option<&str>) -> Result<HpaManifest, ManifestError> {
    let docs = documents(file)?;
    let hpas: Vec<&Document> = docs
        .iter()
        .filter(|d| d.kind() == "HorizontalPodAutoscaler")
        .filter(|d| name.is_none_or(|n| d.name() == n))
        .collect();
    if hpas.is_empty()
        && let Some(found) = scaled_object_hpa(&docs, name)?
    {
        return Ok(found);
    }
    let doc = match hpas.as_slice() {
        [one] => (*one).clone(),
        [] => {
            return Err(ManifestError::NoHpa {
                file: file.to_path_buf(),
                name: name.map(str::to_owned),
                found: found(&docs),
            });
        }
        many => {
            return Err(ManifestError::ManyHpas {
                file: file.to_path_buf(),
                names: many.iter().map(|d| d.name()).collect::<Vec<_>>().join(", "),
            });
        }
    };
    let field_err = |field: String, reason: String| ManifestError::Field {
        file: doc.file.clone(),
        line: doc.line_of(&field),
        object: format!("HorizontalPodAutoscaler {}", doc.name()),
        field,
        reason,
    };
    let api_version = doc
        .value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let version = match api_version {
        "autoscaling/v2" => {
            check::<HorizontalPodAutoscaler>(&doc.value).map_err(|(f, r)| field_err(f, r))?;
            "v2"
        }
        "autoscaling/v1" => {
            check::<k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler>(&doc.value)
                .map_err(|(f, r)| field_err(f, r))?;
            "v1"
        }
        other => {
            return Err(field_err(
                "apiVersion".to_owned(),
                format!("{other:?} is not autoscaling/v2 or autoscaling/v1"),
            ));
        }
    };
    // k8s-openapi defaults what is missing; the API server does not.
    for field in [
        "spec",
        "spec.scaleTargetRef",
        "spec.scaleTargetRef.kind",
        "spec.scaleTargetRef.name",
        "spec.maxReplicas",
    ] {
        let pointer = format!("/{}", field.replace('.', "/"));
        if doc.value.pointer(&pointer).is_none_or(Value::is_null) {
            return Err(field_err(field.to_owned(), "missing".to_owned()));
        }
    }
    let text = |pointer: &str| {
        doc.value
            .pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let name = text("/metadata/name").ok_or_else(|| {
        field_err(
            "metadata.name".to_owned(),
            "the HPA needs a name".to_owned(),
        )
    })?;
    let target_kind = text("/spec/scaleTargetRef/kind").unwrap_or_default();
    if !matches!(
        target_kind.as_str(),
        "Deployment" | "StatefulSet" | "ReplicaSet"
    ) {
        return Err(ManifestError::TargetKind {
            file: doc.file.clone(),
            line: doc.line_of("spec.scaleTargetRef.kind"),
            name,
            kind: target_kind,
        });
    }
    Ok(HpaManifest {
        version,
        namespace: text("/metadata/namespace").unwrap_or_else(|| "default".to_owned()),
        min_replicas: doc
            .value
            .pointer("/spec/minReplicas")
            .and_then(Value::as_i64)
            .and_then(|v| i32::try_from(v).ok())
            .unwrap_or(1),
        target_name: text("/spec/scaleTargetRef/name").unwrap_or_default(),
        target_kind,
        name,
        doc,
        scaled_object: None,
    })
}

/// The HPA KEDA would generate for the ScaledObject of `docs` (the one
/// named `name` if given), when the file holds one and no HPA.
fn scaled_object_hpa(
    docs: &[Document],
    name: Option<&str>,
) -> Result<Option<HpaManifest>, ManifestError> {
    let sos: Vec<&Document> = docs
        .iter()
        .filter(|d| d.kind() == "ScaledObject")
        .filter(|d| name.is_none_or(|n| d.name() == n))
        .collect();
    let doc = match sos.as_slice() {
        [] => return Ok(None),
        [one] => *one,
        many => {
            return Err(ManifestError::ManyHpas {
                file: many[0].file.clone(),
                names: many.iter().map(|d| d.name()).collect::<Vec<_>>().join(", "),
            });
        }
    };
    let field_err = |field: &str, reason: String| ManifestError::Field {
        file: doc.file.clone(),
        line: doc.line_of(field),
        object: doc.describe(),
        field: field.to_owned(),
        reason,
    };
    let so = hpa_keda::ScaledObject::from_value(&doc.value, &doc.describe())
        .map_err(|e| field_err("spec", e.to_string()))?;
    let namespace = so
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".to_owned());
    let hpa = hpa_keda::hpa::generate(&so, &namespace)
        .map_err(|e| field_err("spec.triggers", e.to_string()))?;
    let target_kind = so.spec.scale_target_ref.kind().to_owned();
    if !matches!(
        target_kind.as_str(),
        "Deployment" | "StatefulSet" | "ReplicaSet"
    ) {
        return Err(ManifestError::TargetKind {
            file: doc.file.clone(),
            line: doc.line_of("spec.scaleTargetRef.kind"),
            name: so.metadata.name.clone(),
            kind: target_kind,
        });
    }
    Ok(Some(HpaManifest {
        version: "v2",
        name: hpa_keda::hpa::hpa_name(&so),
        namespace,
        min_replicas: hpa_keda::scaled_object::hpa_min_replicas(&so.spec),
        target_name: so.spec.scale_target_ref.name.clone(),
        target_kind,
        doc: Document {
            value: hpa,
            ..doc.clone()
        },
        scaled_object: Some(so),
    }))
}

/// Deserializes `value` as `T`, giving the path of the first bad field.
fn check<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize::<_, T>(value.clone()).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // A missing field is reported on its parent: name the field itself.
        match inner
            .strip_prefix("missing field `")
            .and_then(|r| r.strip_suffix('`'))
        {
            Some(missing) if path == "." => (missing.to_owned(), "missing".to_owned()),
            Some(missing) => (format!("{path}.{missing}"), "missing".to_owned()),
            None => (path, inner),
        }
    })
}

fn found(docs: &[Document]) -> String {
    if docs.is_empty() {
        return "nothing".to_owned();
    }
    docs.iter()
        .map(Document::describe)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The scale target as it goes to the simulated cluster: the document of
/// `file` the HPA targets (or of the HPA's own file when it holds it), or
/// a default one.
#[derive(Debug, Clone)]
pub struct Workload {
    pub object: Value,
    /// Where it came from (`None`: the default).
    pub source: Option<(PathBuf, u64)>,
}

impl Workload {
    /// Label selector of its pods (`matchLabels`).
    pub fn selector(&self) -> String {
        self.object
            .pointer("/spec/selector/matchLabels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    }

    /// Container names of its pod template, in order.
    pub fn containers(&self) -> Vec<String> {
        self.object
            .pointer("/spec/template/spec/containers")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `spec.replicas`.
    pub fn replicas(&self) -> i32 {
        self.object
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .and_then(|v| i32::try_from(v).ok())
            .unwrap_or(1)
    }
}

/// The HPA's scale target: from `file` if given, else from the HPA's own
/// file if it holds it, else a default (`replicas` = the HPA's minimum, one
/// container `app` requesting cpu 1 and memory 1Gi, as the Gherkin step
/// "a deployment with N pods").
pub fn workload(hpa: &HpaManifest, file: Option<&Path>) -> Result<Workload, ManifestError> {
    let matches = |d: &Document| d.kind() == hpa.target_kind && d.name() == hpa.target_name;
    let (docs, required) = match file {
        Some(f) => (documents(f)?, Some(f)),
        None => (documents(&hpa.doc.file)?, None),
    };
    let mut object = match docs.iter().find(|d| matches(d)) {
        Some(doc) => Workload {
            object: doc.value.clone(),
            source: Some((doc.file.clone(), doc.line)),
        },
        None => {
            if let Some(f) = required {
                return Err(ManifestError::NoWorkload {
                    file: f.to_path_buf(),
                    kind: hpa.target_kind.clone(),
                    name: hpa.target_name.clone(),
                    found: found(&docs),
                });
            }
            default_workload(hpa)
        }
    };
    object.object["metadata"]["namespace"] = json!(hpa.namespace);
    if object.object.pointer("/spec/replicas").is_none() {
        object.object["spec"]["replicas"] = json!(hpa.min_replicas.max(1));
    }
    Ok(object)
}

fn default_workload(hpa: &HpaManifest) -> Workload {
    let n = &hpa.target_name;
    let object = crate::testbed::workload::workload(
        &hpa.target_kind,
        &hpa.namespace,
        n,
        i64::from(hpa.min_replicas.max(1)),
        json!({"containers": [{
            "name": "app",
            "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
        }]}),
    );
    Workload {
        object,
        source: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chart.yaml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    const RENDERED: &str = "---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: php
          image: php
          resources:
            requests: {cpu: 200m}
---
# Source: web/templates/hpa.yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
    - type: Resource
      resource:
        name: cpu
        target: {type: Utilization, averageUtilization: 50}
";

    #[test]
    fn the_hpa_and_its_target_are_found_in_a_rendered_chart() {
        let (_d, path) = write(RENDERED);
        let hpa = hpa(&path, None).unwrap();
        assert_eq!(
            (hpa.name.as_str(), hpa.version, hpa.min_replicas),
            ("web", "v2", 2)
        );
        assert_eq!(hpa.doc.line, 21);
        let w = workload(&hpa, None).unwrap();
        assert_eq!(w.replicas(), 3);
        assert_eq!(w.containers(), ["php"]);
        assert_eq!(w.selector(), "app=web");
        assert_eq!(w.source.unwrap().1, 2);
    }

    #[test]
    fn a_wrongly_typed_field_is_named_with_its_line() {
        let text = RENDERED.replace("maxReplicas: 10", "maxReplicas: ten");
        let (_d, path) = write(&text);
        let err = hpa(&path, None).unwrap_err().to_string();
        assert!(
            err.contains("chart.yaml:29: HorizontalPodAutoscaler web: field spec.maxReplicas:"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_field_is_named() {
        let text = RENDERED.replace("  maxReplicas: 10\n", "");
        let (_d, path) = write(&text);
        let err = hpa(&path, None).unwrap_err().to_string();
        assert!(
            err.contains("HorizontalPodAutoscaler web: field spec.maxReplicas: missing"),
            "{err}"
        );
    }

    #[test]
    fn broken_yaml_names_the_line_in_the_file() {
        let text = RENDERED.replace("  minReplicas: 2", "  minReplicas: [2");
        let (_d, path) = write(&text);
        let err = hpa(&path, None).unwrap_err().to_string();
        assert!(err.contains("chart.yaml:"), "{err}");
        assert!(err.contains("the YAML does not parse"), "{err}");
    }

    #[test]
    fn a_file_without_an_hpa_says_what_it_holds() {
        let (_d, path) = write("kind: Service\nmetadata: {name: web}\n");
        let err = hpa(&path, None).unwrap_err().to_string();
        assert!(
            err.ends_with("no HorizontalPodAutoscaler in the file (found: Service web)"),
            "{err}"
        );
    }

    #[test]
    fn without_a_workload_a_default_one_is_made() {
        let hpa_only = RENDERED.split("---\n").nth(2).unwrap();
        let (_d, path) = write(hpa_only);
        let hpa = hpa(&path, None).unwrap();
        let w = workload(&hpa, None).unwrap();
        assert!(w.source.is_none());
        assert_eq!(w.replicas(), 2);
        assert_eq!(w.containers(), ["app"]);
    }
}
