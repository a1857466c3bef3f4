//! The simulated cluster and its fake metrics server on a thread of their
//! own, serving on a socket, for a measure of the controller alone on the
//! caller's thread: what that thread allocates or runs is the controller's.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::sync::mpsc;

use fake_metrics_server::AppState;
use hpa_core::clock::VirtualClock;
use hpa_embedded::Embedded;
use hpa_sim::SimConfig;
use tokio::sync::oneshot;

/// What the cluster's thread is asked to do.
pub enum Ask<B> {
    /// Add the load `B` says (the builder given to [`Cluster::start`]).
    Build(B),
    /// Move the virtual clock and let the cluster act.
    Advance(jiff::SignedDuration),
}

/// The cluster's thread; answers each [`Ask`] when done.
pub struct Cluster<B> {
    pub url: String,
    pub clock: VirtualClock,
    asks: tokio::sync::mpsc::UnboundedSender<(Ask<B>, oneshot::Sender<()>)>,
}

impl<B: Send + 'static> Cluster<B> {
    /// Starts the thread on a virtual clock; `build` answers each
    /// [`Ask::Build`] there, with the cluster's client and the metrics
    /// server to script.
    pub fn start<F>(mut build: F) -> Self
    where
        F: AsyncFnMut(&kube::Client, &AppState, B) + Send + 'static,
    {
        let (ready_tx, ready_rx) = mpsc::channel();
        let (asks, mut asked) =
            tokio::sync::mpsc::unbounded_channel::<(Ask<B>, oneshot::Sender<()>)>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let clock = VirtualClock::default();
                let Embedded { sim, metrics } =
                    Embedded::new(Some(clock.clone()), SimConfig::default());
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let url = format!("http://{}", listener.local_addr().unwrap());
                tokio::spawn(hpa_sim::serve_router(
                    sim.clone(),
                    sim.router(),
                    listener,
                    std::future::pending(),
                ));
                ready_tx.send((url, clock)).unwrap();
                let client = sim.client();
                while let Some((ask, done)) = asked.recv().await {
                    match ask {
                        Ask::Build(load) => build(&client, &metrics, load).await,
                        Ask::Advance(by) => sim.advance(by),
                    }
                    let _ = done.send(());
                }
            });
        });
        let (url, clock) = ready_rx.recv().unwrap();
        Self { url, clock, asks }
    }

    /// Asks and waits for the answer, the controller's tasks running
    /// meanwhile (as in a cluster, it follows the changes as they come).
    pub async fn ask(&self, ask: Ask<B>) {
        let (done, wait) = oneshot::channel();
        self.asks.send((ask, done)).unwrap();
        wait.await.unwrap();
    }

    /// A client of the cluster's socket that retries nothing, so that each
    /// request the controller makes is made once.
    pub fn client(&self) -> kube::Client {
        let mut config = kube::Config::new(self.url.parse().unwrap());
        config.default_retry = false;
        kube::Client::try_from(config).unwrap()
    }
}
