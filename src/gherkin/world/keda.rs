//! KEDA in a scenario: the ScaledObjects declared, the trigger readings
//! scripted, and the operator and metrics adapter run before every HPA
//! sync on the scenario clock (the pure logic is [`crate::keda`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Patch, PatchParams};

use super::*;
use crate::keda::ScaledObject;
use crate::keda::adapter::{self, Reading, Replicas};
use crate::keda::hpa::{hpa_name, trigger_metrics};
use crate::keda::operator::{self, KedaEvent, Reconcile, Status};
use crate::keda::scaled_object::OWNER_LABEL;
use crate::keda::scalers::TriggerMetric;

/// The ScaledObjects of one scenario, by (namespace, name).
#[derive(Debug, Default)]
pub struct KedaScenario {
    objects: BTreeMap<(String, String), KedaObject>,
}

/// One ScaledObject and what KEDA keeps about it.
#[derive(Debug)]
pub struct KedaObject {
    pub so: ScaledObject,
    pub status: Status,
    /// Scripted readings by trigger index (unscripted triggers read 0).
    readings: BTreeMap<usize, Reading>,
    pub events: Vec<KedaEvent>,
    /// The name of the HPA KEDA created, while it exists.
    hpa: Option<String>,
}

impl KedaScenario {
    /// A declared ScaledObject.
    pub fn get(&self, ns: &str, name: &str) -> Option<&KedaObject> {
        self.objects.get(&(ns.to_owned(), name.to_owned()))
    }
}

impl HpaWorld {
    /// Declares a ScaledObject (a doc string or a manifest document); KEDA's
    /// controller reconciles it at once, creating its HPA.
    pub async fn add_scaled_object(&mut self, object: &Value, what: &str) -> StepResult {
        let so =
            ScaledObject::from_value(object, what).map_err(|e| StepError::Input(e.to_string()))?;
        let ns = so
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| self.namespace.clone());
        let key = (ns, so.metadata.name.clone());
        if self.keda.objects.contains_key(&key) {
            return Err(StepError::Input(format!(
                "{what}: ScaledObject {}/{} is declared twice",
                key.0, key.1
            )));
        }
        self.keda.objects.insert(
            key.clone(),
            KedaObject {
                so,
                status: Status::default(),
                readings: BTreeMap::new(),
                events: Vec::new(),
                hpa: None,
            },
        );
        self.keda_reconcile(&key).await
    }

    /// Scripts what trigger `trigger` of ScaledObject `so` reads from now on.
    pub fn set_trigger_reading(&mut self, so: &str, trigger: &str, reading: Reading) -> StepResult {
        let key = self.qualify(so);
        let object = self.keda.objects.get_mut(&key).ok_or_else(|| {
            StepError::Input(format!("ScaledObject {}/{} is not declared", key.0, key.1))
        })?;
        let metrics = trigger_metrics(&object.so).map_err(|e| StepError::Input(e.to_string()))?;
        let found: Vec<&TriggerMetric> = metrics.iter().filter(|m| m.answers_to(trigger)).collect();
        let [metric] = found.as_slice() else {
            let known: Vec<String> = metrics
                .iter()
                .map(|m| m.trigger_name.clone().unwrap_or_else(|| m.metric.clone()))
                .collect();
            return Err(StepError::Input(format!(
                "ScaledObject {}: {} trigger(s) answer to {trigger:?}; name one by its name or metric name ({})",
                key.1,
                found.len(),
                known.join(", ")
            )));
        };
        object.readings.insert(metric.index, reading);
        Ok(())
    }

    /// The ScaledObject `name` as KEDA keeps it.
    pub fn scaled_object(&self, name: &str) -> Result<&KedaObject, StepError> {
        let (ns, n) = self.qualify(name);
        self.keda
            .get(&ns, &n)
            .ok_or_else(|| StepError::Input(format!("ScaledObject {ns}/{n} is not declared")))
    }

    /// Before each HPA sync: KEDA's controller, its scale loop (every
    /// `pollingInterval`) and its metrics adapter, for every ScaledObject.
    pub(crate) async fn keda_sync(&mut self) -> StepResult {
        let keys: Vec<(String, String)> = self.keda.objects.keys().cloned().collect();
        for key in keys {
            self.keda_reconcile(&key).await?;
            self.keda_poll(&key).await?;
            self.keda_answer(&key).await?;
        }
        Ok(())
    }

    /// The controller's reconcile: the HPA made, replaced or deleted.
    async fn keda_reconcile(&mut self, key: &(String, String)) -> StepResult {
        let now = self.now().await?;
        let Some(object) = self.keda.objects.get_mut(key) else {
            return Ok(());
        };
        let decision = operator::reconcile(
            &object.so,
            &key.0,
            &mut object.status,
            now,
            &mut object.events,
        );
        let previous = object.hpa.clone();
        let target = object.so.spec.scale_target_ref.name.clone();
        match decision {
            Reconcile::Hpa(hpa) => {
                let name = hpa_name(&object.so);
                object.hpa = Some(name.clone());
                if previous.as_ref().is_some_and(|p| p != &name) {
                    self.delete_hpa(&key.0, previous.as_deref().unwrap_or_default())
                        .await?;
                }
                self.apply_hpa(&key.0, &name, hpa).await
            }
            Reconcile::Paused { replicas } => {
                object.hpa = None;
                if let Some(p) = previous {
                    self.delete_hpa(&key.0, &p).await?;
                }
                match replicas {
                    Some(r) => self.keda_scale(&key.0, &target, r).await,
                    None => Ok(()),
                }
            }
            Reconcile::Refused => Ok(()),
        }
    }

    /// The scale loop's poll, when due.
    async fn keda_poll(&mut self, key: &(String, String)) -> StepResult {
        let now = self.now().await?;
        let Some(object) = self.keda.objects.get(key) else {
            return Ok(());
        };
        if object.hpa.is_none() || !operator::poll_due(&object.so, &object.status, now) {
            return Ok(());
        }
        let target = object.so.spec.scale_target_ref.name.clone();
        let current = self.keda_replicas(&key.0, &target).await?.current;
        let Some(object) = self.keda.objects.get_mut(key) else {
            return Ok(());
        };
        let triggers = trigger_metrics(&object.so).map_err(|e| StepError::Input(e.to_string()))?;
        let readings = object.readings.clone();
        let read = |t: &TriggerMetric| {
            readings
                .get(&t.index)
                .copied()
                .unwrap_or(Reading::Value(0.0))
        };
        let activity = adapter::activity(&object.so, &triggers, &read);
        let scale = operator::poll(
            &object.so,
            &mut object.status,
            &activity,
            current,
            now,
            &mut object.events,
        );
        match scale {
            Some(r) => self.keda_scale(&key.0, &target, r).await,
            None => Ok(()),
        }
    }

    /// The metrics adapter's answers to the HPA's coming read, loaded into
    /// the fake metrics server under the HPA's selector.
    async fn keda_answer(&mut self, key: &(String, String)) -> StepResult {
        let Some(object) = self.keda.objects.get(key) else {
            return Ok(());
        };
        if object.hpa.is_none() {
            return Ok(());
        }
        let target = object.so.spec.scale_target_ref.name.clone();
        let replicas = self.keda_replicas(&key.0, &target).await?;
        let Some(object) = self.keda.objects.get_mut(key) else {
            return Ok(());
        };
        let triggers = trigger_metrics(&object.so).map_err(|e| StepError::Input(e.to_string()))?;
        let readings = object.readings.clone();
        let read = |t: &TriggerMetric| {
            readings
                .get(&t.index)
                .copied()
                .unwrap_or(Reading::Value(0.0))
        };
        let answers = adapter::answer(
            &object.so,
            &triggers,
            &read,
            &mut object.status.health,
            replicas,
        );
        object.status.refresh_fallback(&object.so);
        let labels = BTreeMap::from([(OWNER_LABEL.to_owned(), key.1.clone())]);
        let client = self.env().await?.metrics.clone();
        for a in answers {
            let value = a.quantity();
            client
                .set_external_metric(&key.0, &a.metric, &labels, value.as_deref())
                .await
                .map_err(StepError::metrics(format!(
                    "loading KEDA's answer for {} of ScaledObject {}",
                    a.metric, key.1
                )))?;
        }
        Ok(())
    }

    /// The target's `spec.replicas` and ready pods.
    async fn keda_replicas(&mut self, ns: &str, target: &str) -> Result<Replicas, StepError> {
        let kind = self
            .workloads
            .get(&(ns.to_owned(), target.to_owned()))
            .map_or(super::super::params::WorkloadKind::Deployment, |w| w.kind);
        let current = self.scale_replicas(kind, &format!("{ns}/{target}")).await?;
        let pods = self.pods_of(ns, target).await?;
        let ready = pods.iter().filter(|p| pod_ready(p)).count();
        Ok(Replicas {
            current,
            ready: i32::try_from(ready).unwrap_or(i32::MAX),
        })
    }

    /// Sets the target's replicas through its scale subresource, as KEDA does.
    async fn keda_scale(&mut self, ns: &str, target: &str, replicas: i32) -> StepResult {
        let kind = self
            .workloads
            .get(&(ns.to_owned(), target.to_owned()))
            .map_or(super::super::params::WorkloadKind::Deployment, |w| w.kind);
        let api = workload_api(&self.env().await?.client, ns, kind);
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
        self.prune_pods().await
    }

    /// Creates the generated HPA, or replaces its spec, labels and annotations.
    async fn apply_hpa(&mut self, ns: &str, name: &str, hpa: Value) -> StepResult {
        let client = self.env().await?.client.clone();
        let api: Api<DynamicObject> = Api::namespaced_with(client, ns, &hpa_resource("v2"));
        let existing = api
            .get_opt(name)
            .await
            .map_err(StepError::kube(format!("reading HPA {ns}/{name}")))?;
        match existing {
            None => {
                self.create_dynamic(ns, &hpa_resource("v2"), hpa).await?;
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

    async fn delete_hpa(&mut self, ns: &str, name: &str) -> StepResult {
        let client = self.env().await?.client.clone();
        let api: Api<DynamicObject> = Api::namespaced_with(client, ns, &hpa_resource("v2"));
        match api.delete(name, &Default::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
            Err(e) => Err(StepError::kube(format!("deleting HPA {ns}/{name}"))(e)),
        }
    }
}

fn pod_ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}
