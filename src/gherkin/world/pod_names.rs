//! Pod names as steps say them. Steps name a workload's pods `NAME-i` (in
//! creation order) or as its pod table did; a real cluster names them
//! itself (`web-7d4b9-xk2zq`). The first time a pod is seen it gets the
//! next step name of its workload, once, and both ways are kept.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::Pod;

use super::key::ObjKey;

/// The scenario's pod names: step names to the cluster's, and back.
#[derive(Debug, Default)]
pub struct PodNames {
    /// Step names (`NAME-i`, a pod table's) to the cluster's pod names.
    real_of: BTreeMap<ObjKey, String>,
    /// The cluster's pod names to step names.
    step_of: BTreeMap<ObjKey, String>,
    /// Next step index per workload (`NAME-i` counts in creation order).
    next_index: HashMap<ObjKey, u64>,
    /// The pod names a workload's pod table gave, by workload.
    declared: HashMap<ObjKey, Vec<String>>,
    /// The workload of each pod-table name, by pod.
    owner: HashMap<ObjKey, String>,
}

impl PodNames {
    /// Names the first pods of a workload as its pod table does.
    pub fn declare(&mut self, workload: &ObjKey, names: Vec<String>) {
        for n in &names {
            self.owner
                .insert(workload.sibling(n.clone()), workload.name.clone());
        }
        self.declared.insert(workload.clone(), names);
    }

    /// The pod names a workload's pod table gave.
    pub fn declared(&self, workload: &ObjKey) -> &[String] {
        self.declared.get(workload).map_or(&[], Vec::as_slice)
    }

    /// The creation index a step name stands for: its row in the pod table,
    /// else the `i` of `NAME-i` (others sort last).
    pub fn step_index(&self, workload: &ObjKey, name: &str) -> u64 {
        self.declared(workload)
            .iter()
            .position(|n| n == name)
            .and_then(|i| u64::try_from(i).ok())
            .unwrap_or_else(|| pod_index(name, &workload.name))
    }

    /// Gives pod `real` of a workload its step name, once: a pod the
    /// cluster named as the steps do keeps its name; another gets the next
    /// unused index (the pod table's name for it, else `NAME-i`).
    pub fn alias(&mut self, workload: &ObjKey, real: &str) {
        let key = workload.sibling(real);
        if self.step_of.contains_key(&key) {
            return;
        }
        let known = self.step_index(workload, real);
        let next = self.next_index.get(workload).copied().unwrap_or(0);
        let (index, alias) = match known {
            u64::MAX => {
                let declared = usize::try_from(next)
                    .ok()
                    .and_then(|i| self.declared(workload).get(i))
                    .cloned();
                (
                    next,
                    declared.unwrap_or_else(|| format!("{}-{next}", workload.name)),
                )
            }
            i => (i, real.to_owned()),
        };
        self.next_index
            .insert(workload.clone(), next.max(index.saturating_add(1)));
        self.real_of
            .insert(workload.sibling(alias.clone()), real.to_owned());
        self.step_of.insert(key, alias);
    }

    /// Orders a workload's pods by step name (the pod table's names, then
    /// `NAME-i`), giving each pod seen for the first time its step name in
    /// creation order.
    pub fn arrange(&mut self, workload: &ObjKey, pods: &mut [Pod]) {
        pods.sort_by_key(|p| {
            let name = p.metadata.name.clone().unwrap_or_default();
            (
                self.step_index(workload, &name),
                p.metadata.creation_timestamp.as_ref().map(|t| t.0),
                name,
            )
        });
        for p in pods.iter() {
            self.alias(workload, p.metadata.name.as_deref().unwrap_or_default());
        }
        pods.sort_by_key(|p| {
            let real = workload.sibling(p.metadata.name.clone().unwrap_or_default());
            self.step_of
                .get(&real)
                .map_or(u64::MAX, |a| self.step_index(workload, a))
        });
    }

    /// The cluster's name of the pod a step calls `step`, once seen.
    pub fn real_name(&self, step: &ObjKey) -> Option<&str> {
        self.real_of.get(step).map(String::as_str)
    }

    /// The step name of a cluster pod (itself when it has none).
    pub fn step_name(&self, real: &ObjKey) -> String {
        self.step_of
            .get(real)
            .cloned()
            .unwrap_or_else(|| real.name.clone())
    }

    /// The workload a step's pod name belongs to: the workload whose pod
    /// table named it, else `NAME` of `NAME-i` when `is_workload` knows it.
    pub fn workload_of(
        &self,
        pod: &ObjKey,
        is_workload: impl Fn(&ObjKey) -> bool,
    ) -> Option<String> {
        self.owner.get(pod).cloned().or_else(|| {
            pod.name
                .rsplit_once('-')
                .map(|(w, _)| w.to_owned())
                .filter(|w| is_workload(&pod.sibling(w.clone())))
        })
    }

    /// `text` with the names of the pods of namespace `ns` that the cluster
    /// named itself (`web-7d4b9-xk2zq`) replaced by their step names
    /// (`web-2`), so that a condition's or an event's message reads as on
    /// the simulated cluster.
    pub fn in_step_names(&self, ns: &str, text: &str) -> String {
        let mut out = text.to_owned();
        for (real, alias) in &self.step_of {
            if real.ns == ns && real.name != *alias && out.contains(real.name.as_str()) {
                out = out.replace(real.name.as_str(), alias);
            }
        }
        out
    }
}

/// The index of pod `NAME-i` of workload `NAME` (others sort last).
pub fn pod_index(pod: &str, workload: &str) -> u64 {
    pod.strip_prefix(workload)
        .and_then(|r| r.strip_prefix('-'))
        .and_then(|i| i.parse().ok())
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api() -> ObjKey {
        ObjKey::new("default", "api")
    }

    fn pod(name: &str, created_secs: i64) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = Some(name.to_owned());
        p.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            jiff::Timestamp::from_second(created_secs).expect("a timestamp"),
        ));
        p
    }

    #[test]
    fn generated_pod_names_are_aliased_to_the_table_names_in_creation_order() {
        let mut names = PodNames::default();
        names.declare(&api(), vec!["api-blue".to_owned(), "api-canary".to_owned()]);
        for real in ["api-7d4b9-xk2zq", "api-7d4b9-abcde", "api-7d4b9-later"] {
            names.alias(&api(), real);
        }
        let step = |real: &str| names.step_name(&api().sibling(real));
        assert_eq!(step("api-7d4b9-xk2zq"), "api-blue");
        assert_eq!(step("api-7d4b9-abcde"), "api-canary");
        // A pod the workload makes later continues the numbering.
        assert_eq!(step("api-7d4b9-later"), "api-2");
        assert_eq!(
            names.real_name(&api().sibling("api-canary")),
            Some("api-7d4b9-abcde")
        );
    }

    #[test]
    fn pods_the_cluster_named_as_the_steps_do_keep_their_names() {
        let mut names = PodNames::default();
        names.declare(&api(), vec!["api-blue".to_owned()]);
        names.alias(&api(), "api-blue");
        names.alias(&api(), "api-1");
        assert_eq!(names.step_name(&api().sibling("api-blue")), "api-blue");
        assert_eq!(names.step_name(&api().sibling("api-1")), "api-1");
        // The next generated name continues after the highest index seen.
        names.alias(&api(), "api-7d4b9-xk2zq");
        assert_eq!(names.step_name(&api().sibling("api-7d4b9-xk2zq")), "api-2");
    }

    #[test]
    fn a_pod_keeps_the_step_name_it_was_first_given() {
        let mut names = PodNames::default();
        names.alias(&api(), "api-7d4b9-first");
        names.alias(&api(), "api-7d4b9-second");
        names.alias(&api(), "api-7d4b9-first");
        assert_eq!(names.step_name(&api().sibling("api-7d4b9-first")), "api-0");
        assert_eq!(names.step_name(&api().sibling("api-7d4b9-second")), "api-1");
    }

    #[test]
    fn the_same_pod_name_in_two_namespaces_is_two_pods() {
        let mut names = PodNames::default();
        let prod = ObjKey::new("prod", "api");
        names.alias(&api(), "api-7d4b9-xk2zq");
        names.alias(&prod, "api-7d4b9-other");
        names.alias(&prod, "api-7d4b9-xk2zq");
        assert_eq!(names.step_name(&api().sibling("api-7d4b9-xk2zq")), "api-0");
        assert_eq!(names.step_name(&prod.sibling("api-7d4b9-xk2zq")), "api-1");
    }

    #[test]
    fn a_pod_never_seen_is_called_by_its_cluster_name() {
        let names = PodNames::default();
        assert_eq!(names.step_name(&api().sibling("api-xyz")), "api-xyz");
        assert_eq!(names.real_name(&api().sibling("api-0")), None);
    }

    #[test]
    fn generated_names_are_given_in_creation_order_and_pods_come_back_in_step_order() {
        let mut names = PodNames::default();
        let mut pods = vec![
            pod("api-7d4b9-zzz", 30),
            pod("api-7d4b9-aaa", 10),
            pod("api-7d4b9-mmm", 20),
        ];
        names.arrange(&api(), &mut pods);
        let order: Vec<&str> = pods
            .iter()
            .map(|p| p.metadata.name.as_deref().unwrap_or_default())
            .collect();
        assert_eq!(order, ["api-7d4b9-aaa", "api-7d4b9-mmm", "api-7d4b9-zzz"]);
        assert_eq!(names.step_name(&api().sibling("api-7d4b9-zzz")), "api-2");
        // A pod first seen now sorts after those already named, though it
        // was made before them.
        let mut pods = vec![pod("api-7d4b9-000", 5), pod("api-7d4b9-zzz", 30)];
        names.arrange(&api(), &mut pods);
        assert_eq!(pods[1].metadata.name.as_deref(), Some("api-7d4b9-000"));
        assert_eq!(names.step_name(&api().sibling("api-7d4b9-000")), "api-3");
    }

    #[test]
    fn a_step_pod_belongs_to_its_table_or_to_the_workload_its_name_starts_with() {
        let mut names = PodNames::default();
        names.declare(&api(), vec!["canary".to_owned()]);
        let known = |w: &ObjKey| *w == api();
        assert_eq!(
            names
                .workload_of(&api().sibling("canary"), known)
                .as_deref(),
            Some("api")
        );
        assert_eq!(
            names.workload_of(&api().sibling("api-3"), known).as_deref(),
            Some("api")
        );
        assert_eq!(names.workload_of(&api().sibling("web-3"), known), None);
        assert_eq!(
            names.workload_of(&ObjKey::new("prod", "api-3"), known),
            None
        );
    }

    #[test]
    fn messages_read_with_step_names_in_their_namespace_only() {
        let mut names = PodNames::default();
        names.alias(&api(), "api-7d4b9-xk2zq");
        let text = "pod api-7d4b9-xk2zq is not ready";
        assert_eq!(
            names.in_step_names("default", text),
            "pod api-0 is not ready"
        );
        assert_eq!(names.in_step_names("prod", text), text);
    }

    #[test]
    fn only_a_name_of_the_workload_followed_by_a_number_has_an_index() {
        assert_eq!(pod_index("web-3", "web"), 3);
        assert_eq!(pod_index("web-canary", "web"), u64::MAX);
        assert_eq!(pod_index("webby-3", "web"), u64::MAX);
        assert_eq!(pod_index("web3", "web"), u64::MAX);
    }
}
