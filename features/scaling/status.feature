Feature: Writing the HPA status
  The controller writes the status once per sync, and only when it changed.
  Conditions already present keep their place in the list; a conflicting
  status write is retried; one that keeps failing is recorded as a
  FailedUpdateStatus warning and the next sync writes again.

  Background:
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100

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

  # Where upstream's updateStatus gives up at the first 409 and leaves the
  # write to the next sync, hpa-harness re-reads the HPA and retries (up to
  # five attempts in one sync), as its controller contract asks: a conflict
  # with another writer costs no sync period.
  Scenario: A conflicting status write is retried within the sync
    Given updating the status of HPA "web" conflicts 1 times
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" wants 3 replicas
    And the HPA "web" last scaled 0s ago
    And no event "FailedUpdateStatus" is recorded for the HPA "web"
    And an event "SuccessfulRescale" is recorded for the HPA "web"

  Scenario: A status write that keeps conflicting is reported and the next sync writes it
    Given updating the status of HPA "web" conflicts 5 times
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And an event "FailedUpdateStatus" is recorded for the HPA "web"
    And an event "SuccessfulRescale" is recorded for the HPA "web"
    # the new pod web-2 reports nothing: counted as 0 on a scale-up the
    # direction flips, so 3 stays; this time the status is written.
    When 15s pass
    Then the HPA "web" wants 3 replicas
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | ReadyForNewScale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
