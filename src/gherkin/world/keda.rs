//! KEDA in a scenario: the ScaledObjects declared, the trigger readings
//! scripted, and the operator and metrics adapter run before every HPA
//! sync on the scenario clock (the pure logic is [`hpa_keda`]). The room
//! ([`KedaScenario`]) acts on the running cluster through [`KedaReach`],
//! the other rooms it borrows while it does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Patch, PatchParams};

use super::*;
use hpa_keda::adapter::{Reading, Replicas};
use hpa_keda::hpa::trigger_metrics;
use hpa_keda::scaled_object::OWNER_LABEL;
use hpa_keda::scalers::TriggerMetric;
use hpa_keda::status::{self as keda_status, TargetFacts};
use hpa_keda::{KedaLoop, Readings, ScaledObject, Step};

/// The ScaledObjects of one scenario, by (namespace, name).
#[derive(Debug, Default)]
pub struct KedaScenario {
    objects: BTreeMap<ObjKey, KedaObject>,
}

/// One ScaledObject and what KEDA keeps about it.
#[derive(Debug)]
pub struct KedaObject {
    pub keda: KedaLoop,
    /// The readings the scenario scripted.
    readings: Readings,
    /// The target's replicas when KEDA first saw it (`originalReplicaCount`).
    original_replicas: Option<i32>,
}

/// What KEDA reaches beyond its own room, once the cluster runs: the
/// cluster (ScaledObjects, the HPAs it generates, scales, the fake metrics
/// server its adapter answers through), the scale targets the scenario
/// declared (their kinds and pod selectors), pod names (listing a target's
/// pods names them) and the metrics mirror (pods a scale-down removed take
/// their metrics along).
pub struct KedaReach<'w> {
    cluster: &'w mut ScenarioCluster,
    workloads: &'w HashMap<ObjKey, Workload>,
    pod_names: &'w mut PodNames,
    metrics: &'w mut MetricsMirror,
}

impl HpaWorld {
    /// Declares a ScaledObject (a doc string or a manifest document); KEDA's
    /// controller reconciles it at once, creating its HPA.
    pub async fn add_scaled_object(&mut self, object: &Value, what: &str) -> StepResult {
        let (so, key) = self.keda.check_new(object, what, &self.namespace)?;
        self.env().await?;
        let (keda, reach) = self.keda_reach();
        keda.add(so, key, object, reach).await
    }

    /// The KEDA room and the rooms it reaches, borrowed apart.
    pub(crate) fn keda_reach(&mut self) -> (&mut KedaScenario, KedaReach<'_>) {
        let reach = KedaReach {
            cluster: &mut self.cluster,
            workloads: &self.workloads,
            pod_names: &mut self.pod_names,
            metrics: &mut self.metrics,
        };
        (&mut self.keda, reach)
    }
}

impl KedaScenario {
    /// A ScaledObject given as `object` (in `namespace` unless it names
    /// one), refused where it does not parse or is declared twice.
    pub fn check_new(
        &self,
        object: &Value,
        what: &str,
        namespace: &str,
    ) -> Result<(ScaledObject, ObjKey), StepError> {
        let mut so =
            ScaledObject::from_value(object, what).map_err(|e| StepError::Input(e.to_string()))?;
        let ns = so
            .metadata
            .namespace
            .get_or_insert_with(|| namespace.to_owned())
            .clone();
        let key = ObjKey::new(ns, so.metadata.name.clone());
        if self.objects.contains_key(&key) {
            return Err(StepError::Input(format!(
                "{what}: ScaledObject {}/{} is declared twice",
                key.ns, key.name
            )));
        }
        Ok((so, key))
    }

    /// Declares a ScaledObject [`Self::check_new`] took; KEDA's controller
    /// reconciles it at once, creating its HPA.
    pub async fn add(
        &mut self,
        so: ScaledObject,
        key: ObjKey,
        object: &Value,
        mut reach: KedaReach<'_>,
    ) -> StepResult {
        if reach.cluster.is_real() {
            return Err(StepError::unsupported(
                "a ScaledObject is played by the harness's model of KEDA, which needs the simulated cluster; \
                 on a real cluster install KEDA and point a metrics-api trigger at the harness (docs/keda.md, \
                 \"On a real cluster with KEDA installed\")",
            ));
        }
        store(&key, object, reach.cluster).await?;
        let target = so.spec.scale_target_ref.name.clone();
        let original_replicas = reach.current(&key.ns, &target).await.ok();
        let mut keda = KedaLoop::new(so, &key.ns);
        let step = keda.reconcile(reach.cluster.env()?.now(), original_replicas);
        self.objects.insert(
            key.clone(),
            KedaObject {
                keda,
                readings: Readings::default(),
                original_replicas,
            },
        );
        reach.carry_out(&key.ns, &target, step).await?;
        self.write_status(&key, reach.cluster).await
    }

    /// Writes the status the model keeps through the ScaledObject's
    /// `/status`, as KEDA's controller does after each reconcile.
    async fn write_status(&self, key: &ObjKey, cluster: &ScenarioCluster) -> StepResult {
        let Some(object) = self.objects.get(key) else {
            return Ok(());
        };
        let facts = TargetFacts {
            original_replicas: object.original_replicas,
            hpa: object.keda.hpa().map(str::to_owned),
        };
        let keda = &object.keda;
        let status = keda_status::status(keda.scaled_object(), keda.status(), &facts);
        let client = cluster.env()?.client.clone();
        let api: Api<DynamicObject> =
            Api::namespaced_with(client, &key.ns, &scaled_object_resource());
        let mut found = api.get(&key.name).await.map_err(StepError::kube(format!(
            "reading ScaledObject {}/{}",
            key.ns, key.name
        )))?;
        if found.data.get("status") == Some(&status) {
            return Ok(());
        }
        found.data["status"] = status;
        api.replace_status(&key.name, &PostParams::default(), &found)
            .await
            .map_err(StepError::kube(format!(
                "writing the status of ScaledObject {}/{}",
                key.ns, key.name
            )))?;
        Ok(())
    }

    /// Scripts what trigger `trigger` of ScaledObject `so` reads from now on.
    pub fn set_trigger_reading(
        &mut self,
        so: &ObjKey,
        trigger: &str,
        reading: Reading,
    ) -> StepResult {
        let object = self.objects.get_mut(so).ok_or_else(|| {
            StepError::Input(format!(
                "ScaledObject {}/{} is not declared",
                so.ns, so.name
            ))
        })?;
        let metrics = trigger_metrics(object.keda.scaled_object())
            .map_err(|e| StepError::Input(e.to_string()))?;
        let found: Vec<&TriggerMetric> = metrics.iter().filter(|m| m.answers_to(trigger)).collect();
        let [metric] = found.as_slice() else {
            let known: Vec<String> = metrics
                .iter()
                .map(|m| m.trigger_name.clone().unwrap_or_else(|| m.metric.clone()))
                .collect();
            return Err(StepError::Input(format!(
                "ScaledObject {}: {} trigger(s) answer to {trigger:?}; name one by its name or metric name ({})",
                so.name,
                found.len(),
                known.join(", ")
            )));
        };
        object.readings.set(metric.index, reading);
        Ok(())
    }

    /// The ScaledObject `so` as KEDA keeps it.
    pub fn object(&self, so: &ObjKey) -> Result<&KedaObject, StepError> {
        self.objects
            .get(so)
            .ok_or_else(|| StepError::Input(format!("ScaledObject {so} is not declared")))
    }

    /// The ScaledObject `so` as the cluster serves it (`kubectl get so NAME
    /// -o yaml`): the expectations read its status from here, where the
    /// model's status was written.
    pub async fn served(&self, so: &ObjKey, cluster: &ScenarioCluster) -> Result<Value, StepError> {
        self.object(so)?;
        let client = cluster.env()?.client.clone();
        let api: Api<DynamicObject> =
            Api::namespaced_with(client, &so.ns, &scaled_object_resource());
        let found = api
            .get(&so.name)
            .await
            .map_err(StepError::kube(format!("reading ScaledObject {so}")))?;
        Ok(found.data)
    }

    /// Before each HPA sync, for every ScaledObject: KEDA's turn (its
    /// controller and, every `pollingInterval`, its scale loop), then its
    /// metrics adapter's answers.
    pub async fn sync(&mut self, mut reach: KedaReach<'_>) -> StepResult {
        let keys: Vec<ObjKey> = self.objects.keys().cloned().collect();
        for key in keys {
            self.turn(&key, &mut reach).await?;
            self.answer(&key, &mut reach).await?;
            self.write_status(&key, reach.cluster).await?;
        }
        Ok(())
    }

    /// KEDA's turn on the scenario clock, and what it decided written.
    async fn turn(&mut self, key: &ObjKey, reach: &mut KedaReach<'_>) -> StepResult {
        let now = reach.cluster.env()?.now();
        let Some(object) = self.objects.get(key) else {
            return Ok(());
        };
        let target = object.keda.target().to_owned();
        // An unreadable target waits for the adapter's read to report it.
        let current = reach.current(&key.ns, &target).await.ok();
        let Some(object) = self.objects.get_mut(key) else {
            return Ok(());
        };
        let step = object.keda.step(now, &object.readings, current);
        reach.carry_out(&key.ns, &target, step).await
    }

    /// The metrics adapter's answers to the HPA's coming read, loaded into
    /// the fake metrics server under the HPA's selector.
    async fn answer(&mut self, key: &ObjKey, reach: &mut KedaReach<'_>) -> StepResult {
        let Some(object) = self.objects.get(key) else {
            return Ok(());
        };
        if object.keda.hpa().is_none() {
            return Ok(());
        }
        let target = object.keda.target().to_owned();
        let replicas = reach.replicas(&key.ns, &target).await?;
        let Some(object) = self.objects.get_mut(key) else {
            return Ok(());
        };
        let answers = object.keda.answer(&object.readings, replicas);
        let labels = BTreeMap::from([(OWNER_LABEL.to_owned(), key.name.clone())]);
        let client = reach.cluster.env()?.metrics.clone();
        for a in answers {
            let value = a.quantity();
            client
                .set_external_metric(&key.ns, &a.metric, &labels, value.as_deref())
                .await
                .map_err(StepError::metrics(format!(
                    "loading KEDA's answer for {} of ScaledObject {}",
                    a.metric, key.name
                )))?;
        }
        Ok(())
    }
}

/// Stores the ScaledObject in the cluster as `kubectl apply` would, KEDA's
/// CRD first, so that `kubectl get so` shows it with KEDA's status.
async fn store(key: &ObjKey, object: &Value, cluster: &mut ScenarioCluster) -> StepResult {
    let client = cluster.env()?.client.clone();
    let crds: Api<DynamicObject> = Api::all_with(client, &crd_resource());
    if crds
        .get_opt(keda_status::CRD_NAME)
        .await
        .map_err(StepError::kube("reading KEDA's ScaledObject CRD"))?
        .is_none()
    {
        let crd: DynamicObject = serde_json::from_value(keda_status::crd())
            .map_err(|e| StepError::State(format!("KEDA's ScaledObject CRD: {e}")))?;
        match crds.create(&PostParams::default(), &crd).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => return Err(StepError::kube("creating KEDA's ScaledObject CRD")(e)),
        }
        cluster.forget_served_kinds();
    }
    let mut object = object.clone();
    object["metadata"]["namespace"] = Value::from(key.ns.clone());
    if let Some(m) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in ["resourceVersion", "uid", "creationTimestamp"] {
            m.remove(field);
        }
    }
    if let Some(o) = object.as_object_mut() {
        o.remove("status");
    }
    cluster
        .create_dynamic(&key.ns, &scaled_object_resource(), object)
        .await?;
    Ok(())
}

impl KedaReach<'_> {
    /// The kind of scale target `ns/target` (a Deployment unless declared).
    fn kind_of(&self, ns: &str, target: &str) -> super::super::params::WorkloadKind {
        self.workloads
            .get(&ObjKey::new(ns, target))
            .map_or(super::super::params::WorkloadKind::Deployment, |w| w.kind)
    }

    /// Writes a turn's HPA and scale to the cluster.
    async fn carry_out(&mut self, ns: &str, target: &str, step: Step) -> StepResult {
        if let Some(name) = step.delete_hpa {
            self.delete_hpa(ns, &name).await?;
        }
        if let Some(hpa) = step.apply_hpa {
            self.apply_hpa(ns, &hpa.name, hpa.object).await?;
        }
        match step.scale {
            Some(scale) => self.scale(ns, target, scale.to).await,
            None => Ok(()),
        }
    }

    /// The target's `spec.replicas`, through its scale subresource.
    async fn current(&self, ns: &str, target: &str) -> Result<i32, StepError> {
        self.cluster
            .scale_replicas(self.kind_of(ns, target), ns, target)
            .await
    }

    /// The target's `spec.replicas` and ready pods.
    async fn replicas(&mut self, ns: &str, target: &str) -> Result<Replicas, StepError> {
        let current = self.current(ns, target).await?;
        let key = ObjKey::new(ns, target);
        let selector = pod_selector(self.workloads, &key);
        let mut pods = self.cluster.pods(ns, target, &selector).await?;
        self.pod_names.arrange(&key, &mut pods);
        let ready = pods.iter().filter(|p| pod_ready(p)).count();
        Ok(Replicas {
            current,
            ready: i32::try_from(ready).unwrap_or(i32::MAX),
        })
    }

    /// Sets the target's replicas through its scale subresource, as KEDA
    /// does; the pods a scale-down removed take their metrics along.
    async fn scale(&mut self, ns: &str, target: &str, replicas: i32) -> StepResult {
        let kind = self.kind_of(ns, target);
        let env = self.cluster.env()?;
        let api = workload_api(&env.client, ns, kind);
        api.patch_scale(
            target,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": replicas}})),
        )
        .await
        .map_err(StepError::kube(format!(
            "KEDA scaling {} {ns}/{target} to {replicas}",
            kind.word()
        )))?;
        let (cluster, client) = (env.client.clone(), env.metrics.clone());
        self.metrics.prune(&cluster, &client).await
    }

    /// Creates the generated HPA, or replaces its spec, labels and annotations.
    async fn apply_hpa(&self, ns: &str, name: &str, hpa: Value) -> StepResult {
        let client = self.cluster.env()?.client.clone();
        let api: Api<DynamicObject> = Api::namespaced_with(client, ns, &hpa_resource("v2"));
        let existing = api
            .get_opt(name)
            .await
            .map_err(StepError::kube(format!("reading HPA {ns}/{name}")))?;
        match existing {
            None => {
                self.cluster
                    .create_dynamic(ns, &hpa_resource("v2"), hpa)
                    .await?;
            }
            Some(mut found) => {
                let want_spec = hpa.get("spec").cloned().unwrap_or_default();
                if found.data.get("spec") == Some(&want_spec) {
                    return Ok(());
                }
                found.data["spec"] = want_spec;
                api.replace(name, &PostParams::default(), &found)
                    .await
                    .map_err(StepError::kube(format!("updating HPA {ns}/{name}")))?;
            }
        }
        Ok(())
    }

    /// Deletes an HPA KEDA no longer generates (gone already is fine).
    async fn delete_hpa(&self, ns: &str, name: &str) -> StepResult {
        let client = self.cluster.env()?.client.clone();
        let api: Api<DynamicObject> = Api::namespaced_with(client, ns, &hpa_resource("v2"));
        match api.delete(name, &Default::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
            Err(e) => Err(StepError::kube(format!("deleting HPA {ns}/{name}"))(e)),
        }
    }
}

fn scaled_object_resource() -> ApiResource {
    ApiResource {
        group: keda_status::GROUP.to_owned(),
        version: keda_status::VERSION.to_owned(),
        api_version: format!("{}/{}", keda_status::GROUP, keda_status::VERSION),
        kind: "ScaledObject".to_owned(),
        plural: keda_status::PLURAL.to_owned(),
    }
}

fn crd_resource() -> ApiResource {
    ApiResource {
        group: "apiextensions.k8s.io".to_owned(),
        version: "v1".to_owned(),
        api_version: "apiextensions.k8s.io/v1".to_owned(),
        kind: "CustomResourceDefinition".to_owned(),
        plural: "customresourcedefinitions".to_owned(),
    }
}

fn pod_ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

    use super::*;
    use crate::gherkin::params::WorkloadKind;
    use crate::gherkin::pods::{PodShape, create_workload};

    const WORKER: &str = "
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker}
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 1
  fallback: {failureThreshold: 1, replicas: 4}
  triggers:
    - type: rabbitmq
      metadata: {queueName: orders, value: '20'}
";

    /// What a kube client (`kubectl get so worker -o yaml`) reads back.
    async fn served(world: &mut HpaWorld) -> Value {
        let client = world.env().await.unwrap().client.clone();
        let api: Api<DynamicObject> =
            Api::namespaced_with(client, &world.namespace, &scaled_object_resource());
        api.get("worker").await.unwrap().data
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_sim_serves_the_scaled_object_with_the_status_the_model_keeps() {
        let mut world = HpaWorld::new();
        let rows = vec![PodShape::default(); 2];
        create_workload(
            &mut world,
            WorkloadKind::Deployment,
            "worker",
            &PodShape::default(),
            &rows,
        )
        .await
        .unwrap();
        let object = yaml(WORKER, "test").unwrap();
        world.add_scaled_object(&object, "test").await.unwrap();
        let worker = ObjKey::new(world.namespace.clone(), "worker");
        world
            .keda
            .set_trigger_reading(&worker, "rabbitmq", Reading::Value(50.0))
            .unwrap();
        world.sync_step().await.unwrap();

        let got = served(&mut world).await;
        assert_eq!(
            got["spec"]["scaleTargetRef"]["name"], "worker",
            "stored as applied"
        );
        let model = world.keda.object(&worker).unwrap();
        let want = keda_status::status(
            model.keda.scaled_object(),
            model.keda.status(),
            &TargetFacts {
                original_replicas: Some(2),
                hpa: Some("keda-hpa-worker".to_owned()),
            },
        );
        assert_eq!(got["status"], want);
        let ready = &got["status"]["conditions"][0];
        assert_eq!(
            (ready["type"].as_str(), ready["status"].as_str()),
            (Some("Ready"), Some("True"))
        );
        assert_eq!(got["status"]["hpaName"], "keda-hpa-worker");
        assert_eq!(got["status"]["originalReplicaCount"], 2);

        // Two failed reads pass failureThreshold 1: Fallback=True is served.
        world
            .keda
            .set_trigger_reading(&worker, "rabbitmq", Reading::Failed)
            .unwrap();
        world.sync_step().await.unwrap();
        world.sync_step().await.unwrap();
        let got = served(&mut world).await;
        let fallback = &got["status"]["conditions"][2];
        assert_eq!(fallback["type"], "Fallback");
        assert_eq!(fallback["status"], "True", "{:#}", got["status"]);
        assert_eq!(
            got["status"]["health"]["s0-rabbitmq-orders"]["status"],
            "Failing"
        );
    }
}
