//! Runs feature files or folders: each scenario in a fresh [`HpaWorld`],
//! scenarios in parallel, a summary on stdout and optionally a JUnit report.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cucumber::gherkin::{self, tagexpr::TagOperation};
use cucumber::{StatsWriter as _, World as _, WriterExt as _, writer};

use hpa_core::version::KubernetesVersion;

use super::feature_files;
pub use super::outcome::{RunSummary, ScenarioOutcome, Verdict};
use super::selection::{Selection, VersionTagError};
use super::target::{self, RemoteTarget, Target};
use super::versions::{self, PassJunit};
use super::world::HpaWorld;
use crate::testbed::controller::Requests;
use crate::testbed::options::TestbedOptions;
use crate::testbed::start::{Purpose, Testbed, TestbedError};

pub use super::selection::{
    KNOWN_BUG_TAG, REAL_NODE_TAG, SIMULATED_WORKLOADS_TAG, VIRTUAL_CLOCK_TAG,
};
use super::world::Needs;
pub use crate::testbed::BackendKind;

/// What to run and how.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Feature files or folders.
    pub paths: Vec<PathBuf>,
    /// Where to run.
    pub backend: BackendKind,
    /// A tag expression (`@smoke and not @slow`); scenarios must match it.
    pub tags: Option<String>,
    /// Leave out scenarios tagged `@known-bug`.
    pub exclude_known_bugs: bool,
    /// Write a JUnit XML report here.
    pub junit: Option<PathBuf>,
    /// Scenarios run at the same time: each in its own embedded cluster,
    /// or side by side in namespaces of their own on a real cluster; one at
    /// a time on a simulated cluster reached through a kubeconfig or run as
    /// a process (each scenario resets it and moves its virtual clock).
    pub concurrency: usize,
    /// How to reach a cluster other than the embedded one.
    pub testbed: TestbedOptions,
    /// A run that selects no scenario passes instead of failing.
    pub allow_empty: bool,
    /// Records each scenario's decisions (for `--report` and `--plot`).
    pub record: Option<super::record::Recorder>,
    /// The Kubernetes releases whose semantics the scenarios run under
    /// (each untagged scenario under each; see [`versions`]). `None`: the
    /// cluster's own release on a real cluster, else the newest stable one.
    pub versions: Option<Vec<KubernetesVersion>>,
    /// Only scenarios whose name matches this regular expression.
    pub name: Option<String>,
    /// Stop at the first failing scenario (the rest are not run).
    pub fail_fast: bool,
    /// Which configuration of `hpa-controller` our controller runs with
    /// (the binary's defaults unless told otherwise).
    pub requests: Requests,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            paths: Vec::new(),
            backend: BackendKind::Sim,
            tags: None,
            exclude_known_bugs: false,
            junit: None,
            concurrency: 8,
            testbed: TestbedOptions::default(),
            allow_empty: false,
            record: None,
            versions: None,
            name: None,
            fail_fast: false,
            requests: Requests::default(),
        }
    }
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A path does not exist.
    #[error("feature path {0} does not exist")]
    MissingPath(PathBuf),
    /// No path given.
    #[error("no feature file or folder given")]
    NoPaths,
    /// The tag expression does not parse.
    #[error("tag expression {expr:?}: {reason}")]
    Tags { expr: String, reason: String },
    /// The `--name` pattern is not a regular expression.
    #[error("--name {pattern:?}: {reason}")]
    Name { pattern: String, reason: String },
    /// A scenario's `@k8s-` tag names no supported release.
    #[error(transparent)]
    VersionTag(#[from] VersionTagError),
    /// The JUnit report cannot be written.
    #[error("JUnit report {path}")]
    Junit {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The run's cluster could not be made ready.
    #[error(transparent)]
    Testbed(#[from] TestbedError),
    /// A feature file cannot be read or parsed.
    #[error(transparent)]
    Load(#[from] feature_files::LoadError),
    /// Nothing would run: no feature file, no scenario, or none selected.
    #[error("nothing to run in {}: {found} (a run that runs no scenario fails; --allow-empty permits it)", .paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    Empty {
        paths: Vec<PathBuf>,
        found: feature_files::Found,
    },
    /// SIGINT or SIGTERM stopped the run on a real cluster (its namespaces
    /// were deleted).
    #[error("interrupted (SIGINT or SIGTERM): the scenarios still running were stopped")]
    Interrupted,
}

/// Runs the scenarios of `options.paths`.
pub async fn run(options: &RunOptions) -> Result<RunSummary, RunError> {
    // `FILE.feature:LINE` arguments narrow their file to a scenario.
    let (paths, lines) = super::line_filter::split(&options.paths);
    let split = RunOptions {
        paths,
        ..options.clone()
    };
    LINES.scope(lines, run_split(&split)).await
}

tokio::task_local! {
    /// The line filters of the current run (see [`super::line_filter`]).
    static LINES: super::line_filter::Lines;
}

/// Starts the run's testbed and runs the scenarios on it: each in an
/// embedded cluster of its own, or all on the one cluster of the backend.
async fn run_split(options: &RunOptions) -> Result<RunSummary, RunError> {
    if options.backend != BackendKind::Sim {
        check_paths(options)?;
    }
    let testbed = Testbed::start(options.backend, &options.testbed, &Purpose::Scenarios).await?;
    let result = match testbed.target() {
        Target::Embedded => run_on(options, Target::Embedded, options.concurrency).await,
        // Simulated: one scenario at a time (each resets the sim and owns
        // its virtual clock).
        Target::Remote(remote) if !remote.is_real() => {
            run_on(options, Target::Remote(remote), 1).await
        }
        Target::Remote(remote) => on_real_cluster(options, &remote).await,
    };
    testbed.stop().await;
    result
}

/// Runs the scenarios side by side on a real cluster (or one treated as
/// real): what earlier runs left is cleared first, and the namespaces the
/// run made are deleted when it ends or is interrupted (SIGINT, SIGTERM).
async fn on_real_cluster(
    options: &RunOptions,
    remote: &RemoteTarget,
) -> Result<RunSummary, RunError> {
    super::shared_cluster::clear_earlier_runs(remote).await?;
    let result = tokio::select! {
        result = run_on(options, Target::Remote(Box::new(remote.clone())), options.concurrency) => result,
        () = hpa_shutdown::shutdown_signal() => Err(RunError::Interrupted),
    };
    super::shared_cluster::delete_run_namespaces(
        remote,
        matches!(result, Err(RunError::Interrupted)),
    )
    .await;
    result
}

fn check_paths(options: &RunOptions) -> Result<(), RunError> {
    if options.paths.is_empty() {
        return Err(RunError::NoPaths);
    }
    for p in &options.paths {
        if !p.exists() {
            return Err(RunError::MissingPath(p.clone()));
        }
    }
    Ok(())
}

async fn run_on(
    options: &RunOptions,
    target: Target,
    concurrency: usize,
) -> Result<RunSummary, RunError> {
    let versions = match (&options.versions, &target) {
        (Some(list), _) => list.clone(),
        (None, Target::Remote(remote)) => {
            let release = match remote.release {
                Some(release) => release,
                None => crate::testbed::start::cluster_release(&remote.client).await,
            };
            println!(
                "the cluster runs Kubernetes {release} (its /version): the scenarios run under it"
            );
            vec![release]
        }
        (None, _) => vec![KubernetesVersion::LATEST_STABLE],
    };
    let real = matches!(&target, Target::Remote(remote) if remote.is_real());
    target::scope(target, run_paths(options, &versions, concurrency, real)).await
}

/// Runs every selected scenario under each of its releases: one cucumber
/// pass per release in use, their summaries added up and their JUnit
/// reports merged into one.
async fn run_paths(
    options: &RunOptions,
    run_versions: &[KubernetesVersion],
    concurrency: usize,
    real: bool,
) -> Result<RunSummary, RunError> {
    check_paths(options)?;
    let tags: Option<TagOperation> = options
        .tags
        .as_deref()
        .map(|expr| {
            expr.parse().map_err(
                |e: <TagOperation as std::str::FromStr>::Err| RunError::Tags {
                    expr: expr.to_owned(),
                    reason: e.to_string(),
                },
            )
        })
        .transpose()?;
    let files = feature_files::feature_files(&options.paths)?;
    let mut features = feature_files::load(&files)?;
    if real {
        // Side by side on the wall clock: the longest waits start first.
        super::longest_first::order(&mut features);
    }
    let name = options
        .name
        .as_deref()
        .map(|pattern| {
            regex::Regex::new(pattern).map_err(|e| RunError::Name {
                pattern: pattern.to_owned(),
                reason: e.to_string(),
            })
        })
        .transpose()?;
    let selection = Selection {
        tags,
        exclude_known_bugs: options.exclude_known_bugs,
        run_versions: run_versions.to_vec(),
        pass: None,
        lines: LINES.try_with(Clone::clone).unwrap_or_default(),
        name,
    };
    let found = selection.count(&files, &features)?;
    if found.selected == 0 && !options.allow_empty {
        return Err(RunError::Empty {
            paths: options.paths.clone(),
            found,
        });
    }
    let passes = selection.passes(&features);
    let mut summary = RunSummary::default();
    let mut junit_docs = Vec::new();
    for &version in &passes {
        let selection = Selection {
            pass: Some(version),
            ..selection.clone()
        };
        if selection.count(&files, &features)?.selected == 0 {
            continue;
        }
        if passes.len() > 1 {
            println!("\n=== Kubernetes {version} ===");
        }
        let junit = PassJunit::default();
        let pass = run_pass(
            options,
            features.clone(),
            selection,
            version,
            concurrency,
            junit.clone(),
        )
        .await;
        summary.passed_steps += pass.passed_steps;
        summary.skipped_steps += pass.skipped_steps;
        summary.failed_steps += pass.failed_steps;
        summary.parsing_errors += pass.parsing_errors;
        summary.hook_errors += pass.hook_errors;
        summary.scenarios.extend(pass.scenarios);
        junit_docs.push((version, junit.text()));
        if options.fail_fast && summary.failed() {
            break;
        }
    }
    if let Some(file) = &options.junit {
        std::fs::write(file, versions::merge_junit(&junit_docs)).map_err(|source| {
            RunError::Junit {
                path: file.clone(),
                source,
            }
        })?;
    }
    let differences = versions::differences(&summary.scenarios);
    if !differences.is_empty() {
        println!("\n{differences}");
    }
    Ok(summary)
}

/// One cucumber run: the scenarios `selection` gives to `version`.
async fn run_pass(
    options: &RunOptions,
    features: Vec<gherkin::Feature>,
    selection: Selection,
    version: KubernetesVersion,
    concurrency: usize,
    junit_out: PassJunit,
) -> RunSummary {
    let outcomes: Arc<Mutex<Vec<ScenarioOutcome>>> = Arc::default();
    let collected = outcomes.clone();
    let recording = options.record.is_some();
    let requests = options.requests;
    let recorder = options.record.clone();
    let cucumber = HpaWorld::cucumber::<PathBuf>()
        .with_parser(feature_files::Loaded)
        .max_concurrent_scenarios(concurrency.max(1))
        .before(move |feature, rule, scenario, world| {
            world.feature_dir = feature
                .path
                .as_ref()
                .and_then(|p| p.parent())
                .map(std::path::Path::to_path_buf);
            world.real_node = scenario
                .tags
                .iter()
                .any(|t| t.trim_start_matches('@') == REAL_NODE_TAG);
            let tagged = |tag: &str| {
                feature
                    .tags
                    .iter()
                    .chain(rule.iter().flat_map(|r| r.tags.iter()))
                    .chain(&scenario.tags)
                    .any(|t| t.trim_start_matches('@') == tag)
            };
            if tagged(VIRTUAL_CLOCK_TAG) {
                world.cluster.require(Needs::VirtualClock);
            }
            if tagged(SIMULATED_WORKLOADS_TAG) {
                world.cluster.require(Needs::SimulatedWorkloads);
            }
            world.setup.set_release(version);
            world.setup.requests = requests;
            if recording {
                super::record::Recorder::prepare(&mut world.setup.config);
            }
            Box::pin(async move {
                world.prepare().await;
            })
        })
        .after(move |feature, _rule, scenario, finished, world| {
            let outcome = ScenarioOutcome {
                feature: feature.name.clone(),
                scenario: scenario.name.clone(),
                location: format!(
                    "{}:{}",
                    feature
                        .path
                        .as_ref()
                        .map_or_else(String::new, |p| p.display().to_string()),
                    scenario.position.line
                ),
                verdict: Verdict::of(finished),
                kubernetes_version: world
                    .as_deref()
                    .map_or(version, |w| w.setup.config.decision.feature_gates.version()),
                failure: super::outcome::step_error(finished),
            };
            if let Some(recorder) = &recorder {
                recorder.capture(&outcome, world.as_deref());
            }
            if let Ok(mut all) = collected.lock() {
                all.push(outcome);
            }
            match world {
                Some(world) => Box::pin(world.finish()),
                None => Box::pin(async {}),
            }
        })
        .with_writer(
            writer::Basic::raw(
                io::stdout(),
                writer::Coloring::Auto,
                writer::Verbosity::Default,
            )
            .summarized()
            .tee::<HpaWorld, _>(writer::JUnit::for_tee(
                Box::new(junit_out) as Box<dyn io::Write>,
                writer::Verbosity::Default,
            ))
            .normalized(),
        )
        .fail_on_skipped()
        .with_default_cli();
    let cucumber = if options.fail_fast {
        cucumber.fail_fast()
    } else {
        cucumber
    };
    let writer = cucumber
        .filter_run(features, move |feature, rule, scenario| {
            selection.selects(feature, rule, scenario)
        })
        .await;
    let mut summary = RunSummary {
        passed_steps: writer.passed_steps(),
        skipped_steps: writer.skipped_steps(),
        failed_steps: writer.failed_steps(),
        parsing_errors: writer.parsing_errors(),
        hook_errors: writer.hook_errors(),
        scenarios: Vec::new(),
    };
    if let Ok(mut all) = outcomes.lock() {
        summary.scenarios.append(&mut all);
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder of its own under the system temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir()
                .join(format!("hpa-harness-runner-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }

        fn feature(&self, file: &str, text: &str) -> PathBuf {
            let path = self.0.join(file);
            std::fs::write(&path, text).unwrap();
            path
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const TWO_SCENARIOS: &str = r#"Feature: Runner self-test
  Scenario: passes
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas

  @known-bug
  Scenario: fails
    Given a deployment "web" with 2 pods
    Then the deployment "web" has 5 replicas
"#;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_file_line_or_a_name_runs_one_scenario() {
        let scratch = Scratch::new("one");
        let feature = scratch.feature("two.feature", TWO_SCENARIOS);
        let at_line = PathBuf::from(format!("{}:13", feature.display()));
        let summary = run(&RunOptions {
            paths: vec![at_line],
            ..RunOptions::default()
        })
        .await
        .unwrap();
        let names: Vec<&str> = summary
            .scenarios
            .iter()
            .map(|o| o.scenario.as_str())
            .collect();
        assert_eq!(names, ["fails"], "line 13 is a step of the second scenario");
        let summary = run(&RunOptions {
            paths: vec![feature.clone()],
            name: Some("^pass".to_owned()),
            ..RunOptions::default()
        })
        .await
        .unwrap();
        let names: Vec<&str> = summary
            .scenarios
            .iter()
            .map(|o| o.scenario.as_str())
            .collect();
        assert_eq!(names, ["passes"]);
        let err = run(&RunOptions {
            paths: vec![feature],
            name: Some("(".to_owned()),
            ..RunOptions::default()
        })
        .await
        .unwrap_err();
        assert!(err.to_string().starts_with("--name \"(\""), "{err}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_run_under_two_releases_runs_each_scenario_twice_and_writes_one_junit() {
        let scratch = Scratch::new("releases");
        let feature = scratch.feature(
            "pinned.feature",
            &TWO_SCENARIOS.replace("  @known-bug\n", "  @k8s-1.38\n"),
        );
        let junit = scratch.0.join("report.xml");
        let summary = run(&RunOptions {
            paths: vec![feature],
            junit: Some(junit.clone()),
            versions: Some(vec![KubernetesVersion::V1_36, KubernetesVersion::V1_37]),
            ..RunOptions::default()
        })
        .await
        .unwrap();
        let mut ran: Vec<(String, KubernetesVersion)> = summary
            .scenarios
            .iter()
            .map(|o| (o.scenario.clone(), o.kubernetes_version))
            .collect();
        ran.sort();
        assert_eq!(
            ran,
            [
                ("fails".to_owned(), KubernetesVersion::V1_38),
                ("passes".to_owned(), KubernetesVersion::V1_36),
                ("passes".to_owned(), KubernetesVersion::V1_37),
            ],
            "the pinned scenario runs under its own release only"
        );
        let xml = std::fs::read_to_string(junit).unwrap();
        assert_eq!(xml.matches("<testsuites").count(), 1, "{xml}");
        assert!(
            xml.contains("(Kubernetes 1.36)") && xml.contains("(Kubernetes 1.38)"),
            "{xml}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_then_step_is_counted_and_reported_in_junit() {
        let scratch = Scratch::new("junit");
        let feature = scratch.feature("two.feature", TWO_SCENARIOS);
        let junit = scratch.0.join("report.xml");
        let summary = run(&RunOptions {
            paths: vec![feature],
            junit: Some(junit.clone()),
            ..RunOptions::default()
        })
        .await
        .unwrap();
        assert_eq!(summary.passed_steps, 6 + 1);
        assert_eq!(summary.failed_steps, 1);
        assert!(summary.failed());
        let xml = std::fs::read_to_string(junit).unwrap();
        assert!(xml.contains("tests=\"2\""), "{xml}");
        assert!(xml.contains("failures=\"1\""), "{xml}");
        assert!(
            xml.contains("expected deployment web to have 5 replicas, it has 2"),
            "the failure names what was expected and what the cluster shows: {xml}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn known_bugs_are_left_out_when_asked() {
        let scratch = Scratch::new("known-bug");
        let feature = scratch.feature("two.feature", TWO_SCENARIOS);
        let summary = run(&RunOptions {
            paths: vec![feature],
            exclude_known_bugs: true,
            ..RunOptions::default()
        })
        .await
        .unwrap();
        assert_eq!(summary.failed_steps, 0);
        assert_eq!(summary.passed_steps, 6);
        assert!(!summary.failed());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_step_without_a_definition_fails_the_run() {
        let scratch = Scratch::new("undefined");
        let feature = scratch.feature(
            "undefined.feature",
            "Feature: x\n  Scenario: y\n    Given a deployment \"web\" with 2 pods\n    When the moon is full\n",
        );
        let summary = run(&RunOptions {
            paths: vec![feature],
            ..RunOptions::default()
        })
        .await
        .unwrap();
        // fail_on_skipped turns the unmatched (skipped) step into a failure.
        assert_eq!((summary.skipped_steps, summary.failed_steps), (0, 1));
        assert!(summary.failed());
    }

    #[tokio::test]
    async fn a_tag_expression_that_does_not_parse_is_refused() {
        let scratch = Scratch::new("tags");
        let feature = scratch.feature("two.feature", TWO_SCENARIOS);
        let err = run(&RunOptions {
            paths: vec![feature],
            tags: Some("@a and and".to_owned()),
            ..RunOptions::default()
        })
        .await
        .unwrap_err();
        assert!(matches!(err, RunError::Tags { .. }), "{err}");
    }

    #[tokio::test]
    async fn the_kubeconfig_backend_asks_for_the_metrics_server_control_url() {
        let err = run(&RunOptions {
            paths: vec![PathBuf::from("features")],
            backend: BackendKind::Kubeconfig,
            ..RunOptions::default()
        })
        .await
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("backend kubeconfig: --metrics-url is needed"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_run_that_selects_nothing_fails_saying_what_it_found() {
        let scratch = Scratch::new("empty");
        let empty_dir = scratch.0.join("none");
        std::fs::create_dir_all(&empty_dir).unwrap();
        let err = run(&RunOptions {
            paths: vec![empty_dir.clone()],
            ..RunOptions::default()
        })
        .await
        .unwrap_err();
        assert!(
            err.to_string()
                .ends_with(": 0 feature files, 0 scenarios, 0 selected (a run that runs no scenario fails; --allow-empty permits it)"),
            "{err}"
        );
        let feature = scratch.feature("two.feature", TWO_SCENARIOS);
        let err = run(&RunOptions {
            paths: vec![feature.clone()],
            tags: Some("@nothing-has-this".to_owned()),
            ..RunOptions::default()
        })
        .await
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("1 feature file, 2 scenarios, 0 selected"),
            "{err}"
        );
        let no_scenario = scratch.feature("bare.feature", "Feature: nothing yet\n");
        let err = run(&RunOptions {
            paths: vec![no_scenario.clone()],
            ..RunOptions::default()
        })
        .await
        .unwrap_err();
        assert!(matches!(err, RunError::Empty { .. }), "{err}");
        // Permitted when asked.
        let summary = run(&RunOptions {
            paths: vec![empty_dir, no_scenario],
            allow_empty: true,
            ..RunOptions::default()
        })
        .await
        .unwrap();
        assert!(summary.scenarios.is_empty() && !summary.failed());
    }

    #[tokio::test]
    async fn a_syntax_error_names_file_line_and_column() {
        let scratch = Scratch::new("syntax");
        let bad = scratch.feature(
            "bad.feature",
            "Feature: x\n  Scenario: y\n    Given a deployment \"web\" with 2 pods\n  Nonsense here\n",
        );
        let err = run(&RunOptions {
            paths: vec![bad.clone()],
            ..RunOptions::default()
        })
        .await
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("{}:4:", bad.display())),
            "{err}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_junit_report_holds_the_features_of_every_path() {
        let scratch = Scratch::new("junit-paths");
        let one = scratch.0.join("one");
        let two = scratch.0.join("two");
        std::fs::create_dir_all(&one).unwrap();
        std::fs::create_dir_all(&two).unwrap();
        let scenario = |feature: &str| {
            format!(
                "Feature: {feature}\n  Scenario: s\n    Given a deployment \"web\" with 1 pods\n    Then the deployment \"web\" has 1 replicas\n"
            )
        };
        std::fs::write(one.join("a.feature"), scenario("First path")).unwrap();
        std::fs::write(two.join("b.feature"), scenario("Second path")).unwrap();
        let junit = scratch.0.join("r.xml");
        let summary = run(&RunOptions {
            paths: vec![one, two],
            junit: Some(junit.clone()),
            ..RunOptions::default()
        })
        .await
        .unwrap();
        assert_eq!(summary.scenarios.len(), 2);
        let xml = std::fs::read_to_string(&junit).unwrap();
        assert!(
            xml.contains("First path") && xml.contains("Second path"),
            "{xml}"
        );
        assert!(!scratch.0.join("r.xml.1").exists());
    }

    #[tokio::test]
    async fn a_missing_path_is_named() {
        let err = run(&RunOptions {
            paths: vec![PathBuf::from("no/such.feature")],
            ..RunOptions::default()
        })
        .await
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "feature path no/such.feature does not exist"
        );
    }
}
