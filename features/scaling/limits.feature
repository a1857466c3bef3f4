Feature: Min and max replicas, and the scale-up limit without behavior
  The desired count is clamped to [minReplicas, maxReplicas]. An HPA without
  spec.behavior may at most double its replicas per sync (at least up to 4):
  max(2 × current, 4). A target already outside the range jumps straight to
  the nearest bound without looking at metrics.

  Scenario: The desired count is capped at maxReplicas
    # 100 / 30 = 3.33 over 3 pods wants 10; max 5 (below the limit of 6).
    Given a deployment "web" with 3 pods
    And an HPA "web" for deployment "web" with min 1 and max 5 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 30
    And the pods of "web" report "http_requests" of 100, 100 and 100
    When the HPA controller syncs
    Then the deployment "web" has 5 replicas
    And the HPA "web" wants 5 replicas
    And the HPA "web" has condition "ScalingLimited" "True" with reason "TooManyReplicas" and message "the desired replica count is more than the maximum replica count"

  @k8s-1.36
  Scenario: The desired count is raised to minReplicas
    # no load: ratio 0 asks for 0 pods; min 2.
    Given a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 2 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the HPA controller's recommendations for "web" were:
      | age | replicas |
    And the pods of "web" report "cpu" of 0, 0, 0 and 0
    When the HPA controller syncs
    Then the deployment "web" has 2 replicas
    And the HPA "web" reports cpu utilization 0%
    And the HPA "web" has conditions:
      | type           | status | reason           |
      | AbleToScale    | True   | SucceededRescale |
      | ScalingActive  | True   | ValidMetricFound |
      | ScalingLimited | True   | TooFewReplicas   |
    And the HPA "web" has condition "ScalingLimited" "True" with reason "TooFewReplicas" and message "the desired replica count is less than the minimum replica count"
    And an event "SuccessfulRescale" with message "New size: 2; reason: All metrics below target" is recorded for the HPA "web"

  @k8s-1.36
  Scenario: A target above maxReplicas is brought down without looking at metrics
    Given a deployment "web" with 8 pods
    And an HPA "web" for deployment "web" with min 1 and max 5 replicas
    And the HPA "web" scales on cpu utilization 50%
    When the HPA controller syncs
    Then the deployment "web" has 5 replicas
    And the HPA "web" wants 5 replicas
    And the HPA "web" has conditions:
      | type        | status | reason           |
      | AbleToScale | True   | SucceededRescale |
    And an event "SuccessfulRescale" with message "New size: 5; reason: Current number of replicas above Spec.MaxReplicas" is recorded for the HPA "web"

  @k8s-1.36
  Scenario: A target below minReplicas is brought up without looking at metrics
    Given a deployment "web" with 1 pods
    And an HPA "web" for deployment "web" with min 3 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has conditions:
      | type        | status | reason           |
      | AbleToScale | True   | SucceededRescale |
    And an event "SuccessfulRescale" with message "New size: 3; reason: Current number of replicas below Spec.MinReplicas" is recorded for the HPA "web"

  Scenario: Without behavior the replicas at most double per sync (at least to 4)
    # one pod at 100% against 10% wants 10: limited to 4, then 8 (the new
    # pods report nothing yet and count as zero), then 10.
    Given a deployment "web" with 1 pods
    And an HPA "web" for deployment "web" with min 1 and max 20 replicas
    And the HPA "web" scales on cpu utilization 10%
    And the pods of "web" report "cpu" of 1
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" has condition "ScalingLimited" "True" with reason "ScaleUpLimit" and message "the desired replica count is increasing faster than the maximum scale rate"
    When 15s pass
    Then the deployment "web" has 8 replicas
    And the HPA "web" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"
    When 15s pass
    Then the deployment "web" has 10 replicas
    And the HPA "web" has condition "ScalingLimited" "False" with reason "DesiredWithinRange"
    And the deployment "web" stays at 10 replicas for 1m
