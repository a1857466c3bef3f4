Feature: The sync period and the workers
  The controller reconciles every HPA once per
  --horizontal-pod-autoscaler-sync-period (15s by default), with
  --concurrent-horizontal-pod-autoscaler-syncs workers. Time that does not
  complete a period carries over.

  Scenario: A 30s sync period halves how often the replicas can double
    # one pod at 100% against 10% wants 10: 4 at once, 8 one period later.
    Given the HPA controller runs with:
      | flag                                  | value |
      | horizontal-pod-autoscaler-sync-period | 30s   |
    And a deployment "web" with 1 pods
    And an HPA "web" for deployment "web" with min 1 and max 20 replicas
    And the HPA "web" scales on cpu utilization 10%
    And the pods of "web" report "cpu" of 1
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    When 15s pass
    Then the deployment "web" has 4 replicas
    When 15s pass
    Then the deployment "web" has 8 replicas

  Scenario: Every HPA is reconciled at each sync, with a single worker
    Given the HPA controller runs with:
      | flag                                       | value |
      | concurrent-horizontal-pod-autoscaler-syncs | 1     |
    And a deployment "a" with 2 pods
    And a deployment "b" with 2 pods
    And an HPA "a" for deployment "a" with min 1 and max 10 replicas
    And the HPA "a" scales on pods metric "http_requests" with average value 60
    And an HPA "b" for deployment "b" with min 1 and max 10 replicas
    And the HPA "b" scales on cpu utilization 50%
    And the pods of "a" report "http_requests" of 50 and 100
    And the pods of "b" report "cpu" of 900m and 700m
    When the HPA controller syncs
    Then the deployment "a" has 3 replicas
    And the deployment "b" has 4 replicas
    And the HPA "a" has condition "ScalingActive" "True" with reason "ValidMetricFound"
    And the HPA "b" has condition "ScalingActive" "True" with reason "ValidMetricFound"
