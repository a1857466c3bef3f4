//! Time in a scenario: syncs of the controller and time passing, with a
//! sync every sync period.

use super::*;

impl HpaWorld {
    /// "When the HPA controller syncs": ours reconciles every HPA once, now;
    /// the cluster's own is given one of its sync periods to do so.
    pub async fn sync_step(&mut self) -> StepResult {
        if self.cluster.controller() == ControllerKind::Upstream {
            let period = self.signed_sync_period()?;
            self.report_new_pods().await?;
            self.env().await?.advance(period).await?;
            self.since_sync = SignedDuration::ZERO;
            return self.prune_pods().await;
        }
        self.sync_now().await
    }

    /// Every HPA is reconciled once, now (by ours; the cluster's own syncs
    /// on its own).
    pub async fn sync_now(&mut self) -> StepResult {
        let (keda, reach) = self.keda_reach();
        keda.sync(reach).await?;
        self.report_new_pods().await?;
        if self.cluster.controller() == ControllerKind::Upstream {
            self.since_sync = SignedDuration::ZERO;
            return self.prune_pods().await;
        }
        self.driver().await?;
        let driver = self
            .cluster
            .driver_if_started()
            .ok_or_else(|| StepError::State("the controller did not start".to_owned()))?;
        driver
            .sync_all_now()
            .await
            .map_err(StepError::controller("syncing every HPA"))?;
        if explaining() {
            let decisions: Vec<_> = driver
                .keys()
                .into_iter()
                .filter_map(|k| {
                    let (ns, n) = k.split_once('/')?;
                    driver.decisions(ns, n, 1).pop().map(|d| (k.clone(), d))
                })
                .collect();
            if let Some(env) = self.cluster.env_if_started() {
                let offset = env.now().duration_since(env.started_at);
                println!("{}", crate::gherkin::explain::table(offset, &decisions));
            }
        }
        self.since_sync = SignedDuration::ZERO;
        self.prune_pods().await
    }

    /// As time starts to pass, ours reconciles the HPAs its release queues
    /// at once (from 1.37: new HPAs, spec changes), as upstream's informer
    /// handlers do the moment the watch brings them.
    async fn sync_queued(&mut self) -> StepResult {
        let Some(driver) = self.cluster.driver_if_started() else {
            return Ok(());
        };
        let synced = driver
            .sync_queued_now()
            .await
            .map_err(StepError::controller("syncing the HPAs queued at once"))?;
        if synced > 0 && explaining() {
            println!("(synced at once: {synced} new or changed HPA(s))");
        }
        Ok(())
    }

    /// Counts `elapsed` wall-clock time a step spent waiting for what it
    /// expects, and syncs when a sync period has gone by. Upstream's
    /// controller syncs on its own every period, and so does ours deployed;
    /// driven on demand (`--sync-on-demand`), ours would otherwise stand
    /// still while a `Then` step waits, and miss a change that comes due
    /// within the step's patience (a new pod whose samples start to count).
    pub(super) async fn waited(&mut self, elapsed: std::time::Duration) -> StepResult {
        self.since_sync += SignedDuration::try_from(elapsed).unwrap_or(SignedDuration::ZERO);
        if self.since_sync >= self.signed_sync_period()? {
            self.sync_now().await?;
        }
        Ok(())
    }

    /// Moves the clock on by `by`, syncing every sync period meanwhile;
    /// `check` runs after each sync (for "stays at").
    pub async fn pass_time<F>(&mut self, by: SignedDuration, mut check: F) -> StepResult
    where
        F: AsyncCheck,
    {
        let period = self.signed_sync_period()?;
        if period.is_zero() || period.is_negative() {
            return Err(StepError::State(
                "the sync period must be positive".to_owned(),
            ));
        }
        if self.cluster.controller() == ControllerKind::Ours {
            self.driver().await?;
            self.sync_queued().await?;
        }
        let mut left = by;
        // Bounded: one iteration per sync period of the requested span.
        while left.is_positive() {
            let until_sync = period - self.since_sync;
            let step = if left < until_sync { left } else { until_sync };
            self.env().await?.advance(step).await?;
            if self.new_pods.any() {
                // A rollout may have removed pods: their metrics go too.
                self.prune_pods().await?;
                self.report_new_pods().await?;
            }
            left -= step;
            self.since_sync += step;
            if self.since_sync >= period {
                self.sync_now().await?;
                check.check(self).await?;
            }
        }
        Ok(())
    }
}
