Feature: Several metrics
  Each metric proposes a replica count and the largest proposal wins. A
  metric that fails is skipped when the others still allow a scale-up or no
  change; when they would scale down (or all fail) the controller does not
  scale at all, since the failing metric might have asked for more.

  Scenario: The largest proposal wins
    # cpu: 60%, ratio 1.2, ceil(2.4) = 3; pods metric: 100 / 50 = 2, 4.
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the HPA "web" scales on pods metric "http_requests" with average value 50
    And the pods of "web" report "cpu" of 600m and 600m
    And the pods of "web" report "http_requests" of 100 and 100
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" reports cpu utilization 60%
    And the HPA "web" reports "http_requests" at 100
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound" and message "the HPA was able to successfully calculate a replica count from pods metric http_requests"
    And an event "SuccessfulRescale" with message "New size: 4; reason: pods metric http_requests above target" is recorded for the HPA "web"

  Scenario: A failing metric does not stop a scale-up asked for by another
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the HPA "web" scales on pods metric "http_requests" with average value 50
    And the pods of "web" report "cpu" of 900m and 700m
    And the custom metrics API fails
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"
    And an event "FailedGetPodsMetric" is recorded for the HPA "web"
    And no event "FailedComputeMetricsReplicas" is recorded for the HPA "web"
    And an event "SuccessfulRescale" with message "New size: 4; reason: cpu resource utilization (percentage of request) above target" is recorded for the HPA "web"

  Scenario: A failing metric stops a scale-down asked for by another
    # cpu alone would go from 4 to 1; the unknown pods metric might want more.
    Given a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the HPA "web" scales on pods metric "http_requests" with average value 50
    And the HPA controller's recommendations for "web" were:
      | age | replicas |
    And the pods of "web" report "cpu" of 100m, 100m, 100m and 100m
    And the custom metrics API fails
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has conditions:
      | type          | status | reason              |
      | AbleToScale   | True   | SucceededGetScale   |
      | ScalingActive | False  | FailedGetPodsMetric |
    And an event "FailedGetPodsMetric" is recorded for the HPA "web"
    And an event "FailedComputeMetricsReplicas" is recorded for the HPA "web"
