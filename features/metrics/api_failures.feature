Feature: Metrics APIs failing and recovering
  When a metrics API answers with an error the HPA cannot compute a replica
  count: it keeps the current scale, sets ScalingActive=False with the reason
  of the metric type, and records a warning event on every sync. Once the API
  answers again the HPA resumes.

  @k8s-1.36
  Scenario: The resource metrics API fails, then recovers
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 900m and 700m
    And the resource metrics API fails
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has conditions:
      | type          | status | reason                  |
      | AbleToScale   | True   | SucceededGetScale       |
      | ScalingActive | False  | FailedGetResourceMetric |
    And an event "FailedGetResourceMetric" is recorded for the HPA "web"
    And an event "FailedComputeMetricsReplicas" is recorded for the HPA "web"
    When 1m passes
    Then the deployment "web" is not rescaled
    When the resource metrics API recovers
    And the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |

  Scenario: The custom metrics API fails for a pods metric, then recovers
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    And the custom metrics API fails
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has conditions:
      | type          | status | reason              |
      | AbleToScale   | True   | SucceededGetScale   |
      | ScalingActive | False  | FailedGetPodsMetric |
    And an event "FailedGetPodsMetric" is recorded for the HPA "web"
    And an event "FailedComputeMetricsReplicas" is recorded for the HPA "web"
    When the custom metrics API recovers
    And the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"

  Scenario: The custom metrics API fails for an object metric, then recovers
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on object metric "requests_per_second" of Deployment "web" with value 100
    And object metric "requests_per_second" of Deployment "web" is 150
    And the custom metrics API fails
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has conditions:
      | type          | status | reason                |
      | AbleToScale   | True   | SucceededGetScale     |
      | ScalingActive | False  | FailedGetObjectMetric |
    And an event "FailedGetObjectMetric" is recorded for the HPA "web"
    And an event "FailedComputeMetricsReplicas" is recorded for the HPA "web"
    When the custom metrics API recovers
    And the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"

  Scenario: The external metrics API fails, then recovers
    Given a deployment "worker" with 3 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 10 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "queue=jobs" and value 10
    And external metric "queue_messages" with selector "queue=jobs" is 10 and 5
    And the external metrics API fails
    When the HPA controller syncs
    Then the deployment "worker" is not rescaled
    And the HPA "worker" has conditions:
      | type          | status | reason                  |
      | AbleToScale   | True   | SucceededGetScale       |
      | ScalingActive | False  | FailedGetExternalMetric |
    And an event "FailedGetExternalMetric" is recorded for the HPA "worker"
    And an event "FailedComputeMetricsReplicas" is recorded for the HPA "worker"
    When the external metrics API recovers
    And the HPA controller syncs
    Then the deployment "worker" has 5 replicas
    And the HPA "worker" has condition "ScalingActive" "True" with reason "ValidMetricFound"
