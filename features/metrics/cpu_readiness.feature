Feature: Cpu readiness and the initialization period
  For cpu only, the controller distrusts samples of pods that are not (yet)
  properly ready: a pod without a Ready condition or a start time is unready;
  within --horizontal-pod-autoscaler-cpu-initialization-period (5m) of its
  start, a pod is unready when Ready is False or when its sample began before
  one metric window after the last readiness change; after that period, only
  a pod that has never been ready (Ready False and the last change within
  --horizontal-pod-autoscaler-initial-readiness-delay (30s) of its start) is
  unready. Unready samples are dropped; on a scale-up they count as zero.

  Scenario Outline: A pod that was never ready counts as zero on a scale-up (<case>)
    # the ready pods alone: 1800m / 2000m = 90%, ratio 1.8; with web-2 at 0:
    # 1800m / 3000m = 60%, ratio 1.2, ceil(1.2 × 3) = 4.
    Given a deployment "web" with pods:
      | pod   | ready   | started   | ready since   |
      | web-0 | true    | 10m       | 10m           |
      | web-1 | true    | 10m       | 10m           |
      | web-2 | <ready> | <started> | <ready since> |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 900m, 900m and 900m
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" reports cpu utilization 90%
    And the HPA "web" has condition "ScalingLimited" "False" with reason "DesiredWithinRange"

    Examples:
      | case                | ready | started | ready since |
      | not ready           | false | 10m     | 10m         |
      | no Ready condition  | none  | 10m     | 10m         |
      | no start time       | true  | never   | 10m         |

  Scenario: A pod that turned unready long after it started still counts
    # web-2 went unready 5m after starting, past the 30s initial readiness
    # delay: its sample counts. 2700m / 3000m = 90%, ceil(1.8 × 3) = 6.
    Given a deployment "web" with pods:
      | pod   | ready | started | ready since |
      | web-0 | true  | 10m     | 10m         |
      | web-1 | true  | 10m     | 10m         |
      | web-2 | false | 10m     | 5m          |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 900m, 900m and 900m
    When the HPA controller syncs
    Then the deployment "web" has 6 replicas
    And the HPA "web" reports cpu utilization 90%

  Scenario Outline: The initial readiness delay decides whether an unready pod was ever ready (delay <delay>)
    # web-2 turned unready 1m after it started.
    Given the HPA controller runs with:
      | flag                                              | value   |
      | horizontal-pod-autoscaler-initial-readiness-delay | <delay> |
    And a deployment "web" with pods:
      | pod   | ready | started | ready since |
      | web-0 | true  | 10m     | 10m         |
      | web-1 | true  | 10m     | 10m         |
      | web-2 | false | 10m     | 9m          |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 900m, 900m and 900m
    When the HPA controller syncs
    Then the deployment "web" has <replicas> replicas

    Examples:
      | delay | replicas |
      | 30s   | 6        |
      | 2m    | 4        |

  Scenario Outline: A fresh pod whose sample predates its readiness is unready within the initialization period (<period>)
    # web-2 started 1m ago and became ready 20s ago; its 1m sample ends now,
    # so it began before the readiness change.
    Given the HPA controller runs with:
      | flag                                                | value    |
      | horizontal-pod-autoscaler-cpu-initialization-period | <period> |
    And a deployment "web" with pods:
      | pod   | ready | started | ready since |
      | web-0 | true  | 10m     | 10m         |
      | web-1 | true  | 10m     | 10m         |
      | web-2 | true  | 1m      | 20s         |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods report:
      | pod   | cpu  | timestamp | window |
      | web-0 | 900m | 0s        | 1m     |
      | web-1 | 900m | 0s        | 1m     |
      | web-2 | 900m | 0s        | 1m     |
    When the HPA controller syncs
    Then the deployment "web" has <replicas> replicas
    And the HPA "web" reports cpu utilization 90%

    Examples:
      | period | replicas |
      | 5m     | 4        |
      | 30s    | 6        |

  Scenario: Unready pods are left out on a scale-down
    # the ready pods: 200m / 2000m = 10%, ratio 0.2, ceil(0.2 × 2) = 1; the
    # busy never-ready pod does not hold the count up.
    Given a deployment "web" with pods:
      | pod   | ready | started | ready since |
      | web-0 | true  | 10m     | 10m         |
      | web-1 | true  | 10m     | 10m         |
      | web-2 | false | 10m     | 10m         |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the HPA controller's recommendations for "web" were:
      | age | replicas |
    And the pods of "web" report "cpu" of 100m, 100m and 900m
    When the HPA controller syncs
    Then the deployment "web" has 1 replicas
    And the HPA "web" reports cpu utilization 10%
    And an event "SuccessfulRescale" with message "New size: 1; reason: All metrics below target" is recorded for the HPA "web"
