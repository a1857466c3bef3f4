Feature: Pods metrics (custom.metrics.k8s.io)
  A Pods metric is averaged over the pods that report it and compared with an
  average value target. Pods without a value are "missing": on a scale-down
  they are assumed to use exactly the target, on a scale-up nothing; if that
  assumption flips the direction of the change, the replica count is kept.
  Pending pods are unready and count as zero on a scale-up.

  Background:
    Given a namespace "shop"

  Scenario: Two pods at 50 and 100 against an average value of 60 scale to 3
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" wants 3 replicas
    And the HPA "web" reports "http_requests" at 75
    And the HPA "web" last scaled 0s ago
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound" and message "the HPA was able to successfully calculate a replica count from pods metric http_requests"
    And the HPA "web" has condition "AbleToScale" "True" with reason "SucceededRescale" and message "the HPA controller was able to update the target scale to 3"
    And an event "SuccessfulRescale" with message "New size: 3; reason: pods metric http_requests above target" is recorded for the HPA "web"

  Scenario: One pod reports 2 and the other nothing: the missing pod counts as the target and nothing changes
    # average of the reporting pod: 2, ratio 2/60 < 1 (scale-down), so the
    # missing pod is assumed at 60: (2 + 60) / 2 = 31, ratio 0.52,
    # ceil(0.52 × 2) = 2 = the current count.
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods report:
      | pod   | http_requests |
      | web-0 | 2             |
      | web-1 |               |
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" wants 2 replicas
    And the HPA "web" reports "http_requests" at 2
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | ReadyForNewScale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
    And no event "SuccessfulRescale" is recorded for the HPA "web"

  @k8s-1.36
  Scenario: Missing pods count as the target on a scale-down
    # three pods at 10, one missing: (3 × 10 + 60) / 4 = 22.5, ratio 0.375,
    # ceil(0.375 × 4) = 2 (ignoring the missing pod would give 1).
    Given a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the HPA controller's recommendations for "web" were:
      | age | replicas |
    And the pods report:
      | pod   | http_requests |
      | web-0 | 10            |
      | web-1 | 10            |
      | web-2 | 10            |
      | web-3 |               |
    When the HPA controller syncs
    Then the deployment "web" has 2 replicas
    And the HPA "web" reports "http_requests" at 10
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
    And an event "SuccessfulRescale" with message "New size: 2; reason: All metrics below target" is recorded for the HPA "web"

  Scenario: Missing pods count as zero on a scale-up, and a flipped direction keeps the count
    # four pods at 70 against 60 is a scale-up (ratio 1.17); the two missing
    # pods at 0 give 280 / 6 = 46.7, ratio 0.78: the direction flips, so the
    # controller keeps 6 (the reporting pods alone would ask for 5).
    Given a deployment "web" with 6 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the HPA controller's recommendations for "web" were:
      | age | replicas |
    And the pods report:
      | pod   | http_requests |
      | web-0 | 70            |
      | web-1 | 70            |
      | web-2 | 70            |
      | web-3 | 70            |
      | web-4 |               |
      | web-5 |               |
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" wants 6 replicas
    And the HPA "web" reports "http_requests" at 70
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | ReadyForNewScale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |

  Scenario: A missing pod counted as zero still lets a large scale-up through
    # three pods at 200 against 100, one missing: 600 / 4 = 150, ratio 1.5,
    # ceil(1.5 × 4) = 6, below the scale-up limit max(2 × 4, 4) = 8.
    Given a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 100
    And the pods report:
      | pod   | http_requests |
      | web-0 | 200           |
      | web-1 | 200           |
      | web-2 | 200           |
      | web-3 |               |
    When the HPA controller syncs
    Then the deployment "web" has 6 replicas
    And the HPA "web" reports "http_requests" at 200
    And the HPA "web" has condition "ScalingLimited" "False" with reason "DesiredWithinRange"
    And an event "SuccessfulRescale" with message "New size: 6; reason: pods metric http_requests above target" is recorded for the HPA "web"

  @k8s-1.36
  Scenario: A pending pod counts as zero on a scale-up
    # the two running pods average 100 against 50 (ratio 2); the pending pod
    # counts as 0: 200 / 3 = 66.666, ratio 1.33, ceil(1.33 × 3) = 4.
    Given a deployment "web" with pods:
      | pod   | phase   | ready |
      | web-0 | Running | true  |
      | web-1 | Running | true  |
      | web-2 | Pending | false |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 50
    And the pods of "web" report "http_requests" of 100, 100 and 100
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" reports "http_requests" at 100
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
