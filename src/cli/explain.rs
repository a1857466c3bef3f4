//! `hpa-harness explain`: runs one feature file and prints, for every sync,
//! the controller's decision for each HPA as a table.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CliResult;
use crate::gherkin::{RunOptions, runner, world};
use crate::report::Recorder;

/// Options of `hpa-harness explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The feature file to run and explain.
    #[arg(value_name = "FILE.feature")]
    pub file: PathBuf,
    /// Run only scenarios whose tags match this expression.
    #[arg(long, value_name = "EXPR")]
    pub tags: Option<String>,
    /// Also draw each scenario's timeline (one per HPA, one under the
    /// other) to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// The Kubernetes releases to explain the scenarios under (`1.36`, or
    /// `1.36,1.37` to see the decisions of each). Default: 1.37; scenarios
    /// tagged `@k8s-X.Y` run under their tagged releases.
    #[arg(long, value_name = "X.Y[,X.Y]")]
    pub kubernetes_version: Option<super::VersionList>,
}

/// Runs `hpa-harness explain`: the scenarios run one at a time so that the
/// tables of one scenario stay together.
pub async fn run(args: Args) -> CliResult {
    world::set_explain(true);
    let options = RunOptions {
        paths: vec![args.file],
        tags: args.tags,
        concurrency: 1,
        record: args.plot.as_ref().map(|_| Recorder::default()),
        versions: args.kubernetes_version.map(|l| l.0),
        ..RunOptions::default()
    };
    let summary = runner::run(&options).await?;
    if let (Some(path), Some(recorder)) = (&args.plot, &options.record) {
        let timelines: Vec<_> = recorder
            .scenarios()
            .into_iter()
            .flat_map(|s| s.hpas.into_iter().map(|h| h.timeline))
            .collect();
        crate::plot::write(path, &timelines, crate::plot::Layout::Stacked)?;
        println!("timeline drawn to {}", path.display());
    }
    Ok(if summary.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn explain_plot_draws_the_timeline_of_each_hpa() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("out.svg");
        let feature = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("features/walkthrough/php_apache.feature");
        let code = run(Args {
            file: feature,
            tags: None,
            plot: Some(svg.clone()),
            kubernetes_version: None,
        })
        .await
        .unwrap();
        world::set_explain(false);
        assert_eq!(code, ExitCode::SUCCESS);
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(
            text.contains("HPA default/php-apache"),
            "the title names the HPA"
        );
        assert!(
            text.contains("scale down (rescale event)"),
            "the rescales are marked"
        );
    }

    /// Issue 29: from zero replicas an AverageValue ratio is infinite, and
    /// drawing it spun forever. The run goes on a thread of its own so that
    /// a regression fails here instead of hanging the suite.
    #[test]
    fn explain_plot_draws_a_scale_up_from_zero_replicas() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("out.svg");
        let feature = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("features/scaling/zero_plot.feature");
        let args = Args {
            file: feature,
            tags: None,
            plot: Some(svg.clone()),
            kubernetes_version: None,
        };
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let code = runtime.block_on(run(args)).unwrap();
            world::set_explain(false);
            done.send(code).unwrap();
        });
        let code = finished
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("explain --plot finishes");
        assert_eq!(code, ExitCode::SUCCESS);
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(
            text.contains("HPA default/batch"),
            "the title names the HPA"
        );
        assert!(
            text.contains("scale up (rescale event)"),
            "the scale up from zero is marked"
        );
        assert!(
            text.contains("are drawn at the top"),
            "the infinite ratio is said to be off the scale"
        );
        assert!(
            !text.contains("NaN") && !text.contains("inf"),
            "no non-finite number"
        );
    }
}
