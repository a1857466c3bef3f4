Feature: Writing the HPA status
  The controller writes the status once per sync, and only when it changed.
  Conditions already present keep their place in the list. As upstream's
  updateStatus, the status is written once: a conflict is recorded as a
  FailedUpdateStatus warning and the next sync writes again. A conflicting
  scale update is retried within the sync (client-go's RetryOnConflict, as
  in v1.36), so it is a SuccessfulRescale.

  Background:
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100

  @k8s-1.36
  Scenario: Existing conditions keep their order
    Given the HPA "web" has status:
      """
      currentReplicas: 2
      desiredReplicas: 2
      conditions:
      - type: ScalingLimited
        status: "True"
        reason: TooManyReplicas
        message: the desired replica count is more than the maximum replica count
        lastTransitionTime: "2025-12-31T23:00:00Z"
      - type: ScalingActive
        status: "True"
        reason: ValidMetricFound
        message: the HPA was able to successfully calculate a replica count from pods metric http_requests
        lastTransitionTime: "2025-12-31T23:00:00Z"
      - type: AbleToScale
        status: "True"
        reason: ReadyForNewScale
        message: recommended size matches current size
        lastTransitionTime: "2025-12-31T23:00:00Z"
      """
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | ScalingLimited | False  | DesiredWithinRange |
      | ScalingActive  | True   | ValidMetricFound   |
      | AbleToScale    | True   | SucceededRescale   |

  Scenario: A conflicting status write is not retried within the sync
    Given updating the status of HPA "web" conflicts 1 times
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And an event "FailedUpdateStatus" is recorded for the HPA "web"
    And an event "SuccessfulRescale" is recorded for the HPA "web"
    When 15s pass
    Then the HPA "web" wants 3 replicas

  Scenario: A conflicting scale update is retried within the sync
    Given updating the scale of "web" conflicts 1 times
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" wants 3 replicas
    And an event "SuccessfulRescale" is recorded for the HPA "web"
    And no event "FailedRescale" is recorded for the HPA "web"

  Scenario: A status write that keeps conflicting is reported at each sync until one writes it
    Given updating the status of HPA "web" conflicts 2 times
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And an event "FailedUpdateStatus" is recorded for the HPA "web"
    And an event "SuccessfulRescale" is recorded for the HPA "web"
    # the new pod web-2 reports nothing: counted as 0 on a scale-up the
    # direction flips, so 3 stays; the second sync conflicts again, the
    # third writes the status.
    When 30s pass
    Then the HPA "web" wants 3 replicas
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | ReadyForNewScale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
