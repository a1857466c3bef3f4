Feature: A sync on a stale HPA cache is skipped from Kubernetes 1.37
  From 1.37 (StaleControllerConsistencyHPA, beta and on; k/k #139025) the
  controller remembers the resourceVersion of each status it writes, and
  defers the HPA's next sync until its HPA watch has delivered that
  version: the sync is skipped (no scale, no status, no event; the error
  "read version: N is not as new as written version: M for group resource
  horizontalpodautoscalers.autoscaling" goes to the log) and the HPA is
  queued again one sync period later. Through 1.36 the controller syncs on
  the stale cache, and its status write, made on the stale object,
  conflicts. Here a queue against 10 messages per pod asks for
  ceil(messages / 10) replicas, and the HPA watch lags 20 seconds.

  Background:
    Given a deployment "worker" with 2 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 10 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 10
    And external metric "queue_messages" with selector "" is 20
    When the HPA controller syncs
    Then the deployment "worker" has 2 replicas
    # From now on every HPA change reaches the controller 20s late.
    When the HPA watch lags 20s
    And external metric "queue_messages" with selector "" is 40
    # The cache holds the status the controller wrote before the lag: this
    # sync runs, scales to 4 and writes a status the cache sees only at 35s.
    And 15s pass
    Then the deployment "worker" has 4 replicas
    When external metric "queue_messages" with selector "" is 80

  @k8s-1.37 @k8s-1.38
  Scenario: From 1.37 the sync at 30s is skipped and the one at 45s scales
    When 15s pass
    Then the deployment "worker" has 4 replicas
    And the HPA "worker" wants 4 replicas
    And no event "FailedUpdateStatus" is recorded for the HPA "worker"
    When 15s pass
    Then the deployment "worker" has 8 replicas

  @k8s-1.35 @k8s-1.36
  Scenario: Through 1.36 the sync at 30s runs on the stale cache and its status write conflicts
    When 15s pass
    Then the deployment "worker" has 8 replicas
    And an event "FailedUpdateStatus" is recorded for the HPA "worker"
