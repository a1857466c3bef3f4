Feature: Resource metrics (metrics.k8s.io): cpu and memory
  Utilization is the summed usage over the summed requests of the pods that
  report, truncated to an integer percentage before it is compared with the
  target. An average value target compares the plain average usage instead.
  Pods being deleted and Failed pods are ignored. A missing request is an
  error.

  @k8s-1.36
  Scenario: Two pods at 90% and 70% of their cpu request against 50% scale to 4
    # utilization 1600m / 2000m = 80%, ratio 1.6, ceil(1.6 × 2) = 4.
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 900m and 700m
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" wants 4 replicas
    And the HPA "web" reports cpu utilization 80%
    And the HPA "web" reports "cpu" at 800m
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound" and message "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"
    And an event "SuccessfulRescale" with message "New size: 4; reason: cpu resource utilization (percentage of request) above target" is recorded for the HPA "web"

  Scenario: Utilization is truncated to an integer percentage before the ratio
    # 5 × 605m / 5 × 1 cpu = 60.5%, truncated to 60: ratio 1.2, ceil(1.2 × 5) = 6.
    # Without truncation the ratio would be 1.21 and the answer 7.
    Given a deployment "web" with 5 pods
    And an HPA "web" for deployment "web" with min 1 and max 20 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 605m, 605m, 605m, 605m and 605m
    When the HPA controller syncs
    Then the deployment "web" has 6 replicas
    And the HPA "web" reports cpu utilization 60%
    And the HPA "web" reports "cpu" at 605m

  @simulated-workloads
  Scenario: Failed pods are ignored
    # web-2 failed: web-0 and web-1 give 1600m / 2000m = 80%, ratio 1.6,
    # ceil(1.6 × 2) = 4 (counting web-2 as well would give ceil(1.6 × 3) = 5).
    Given a deployment "web" with pods:
      | pod   | phase   |
      | web-0 | Running |
      | web-1 | Running |
      | web-2 | Failed  |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 800m, 800m and 800m
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" reports cpu utilization 80%
    And an event "SuccessfulRescale" with message "New size: 4; reason: cpu resource utilization (percentage of request) above target" is recorded for the HPA "web"

  @simulated-workloads
  Scenario: Pods being deleted are ignored
    # web-2 is terminating: web-0 and web-1 give 80%, ratio 1.6, ceil(3.2) = 4.
    Given a deployment "web" with pods:
      | pod   | deleted |
      | web-0 | false   |
      | web-1 | false   |
      | web-2 | true    |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 800m, 800m and 800m
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" reports cpu utilization 80%

  Scenario: A pod without a cpu request stops a utilization HPA
    Given a deployment "web" with pods:
      | pod   | cpu request |
      | web-0 | 1           |
      | web-1 |             |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 900m and 900m
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has conditions:
      | type          | status | reason                  |
      | AbleToScale   | True   | SucceededGetScale       |
      | ScalingActive | False  | FailedGetResourceMetric |
    And the HPA "web" has condition "ScalingActive" "False" with reason "FailedGetResourceMetric" and message "the HPA was unable to compute the replica count: failed to get cpu utilization: missing request for cpu in container app of Pod web-1"
    And an event "FailedGetResourceMetric" is recorded for the HPA "web"
    And an event "FailedComputeMetricsReplicas" is recorded for the HPA "web"

  Scenario: A restartable init container (sidecar) adds its request to the pod's request
    # requests 500m + 500m per pod, usage 450m + 150m: 1200m / 2000m = 60%,
    # ratio 1.2, ceil(2.4) = 3 (without the sidecar's request: 120%, then 4).
    Given a deployment "web" with pods:
      | pod   | cpu request           |
      | web-0 | app=500m, +proxy=500m |
      | web-1 | app=500m, +proxy=500m |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods report:
      | pod   | cpu                   |
      | web-0 | app=450m, proxy=150m  |
      | web-1 | app=450m, proxy=150m  |
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" reports cpu utilization 60%

  Scenario: Cpu average value compares the plain average usage
    # (300m + 500m) / 2 = 400m against 250m: ratio 1.6, ceil(3.2) = 4.
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu average value 250m
    And the pods of "web" report "cpu" of 300m and 500m
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" reports "cpu" at 400m
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound" and message "the HPA was able to successfully calculate a replica count from cpu resource"
    And an event "SuccessfulRescale" with message "New size: 4; reason: cpu resource above target" is recorded for the HPA "web"

  Scenario: Memory average value
    # (600Mi + 800Mi) / 2 = 700Mi against 500Mi: ratio 1.4, ceil(2.8) = 3.
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on memory average value 500Mi
    And the pods of "web" report "memory" of 600Mi and 800Mi
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" reports "memory" at 700Mi
    And an event "SuccessfulRescale" with message "New size: 3; reason: memory resource above target" is recorded for the HPA "web"

  Scenario: Memory utilization
    # 1600Mi of 2 × 1Gi requested = 78.125%, truncated to 78: ratio 1.3, ceil(2.6) = 3.
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on memory utilization 60%
    And the pods of "web" report "memory" of 900Mi and 700Mi
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" reports memory utilization 78%
    And an event "SuccessfulRescale" with message "New size: 3; reason: memory resource utilization (percentage of request) above target" is recorded for the HPA "web"

  Scenario Outline: Pod-level requests replace the containers' requests (PodLevelResources=<gate>)
    # 800m per pod: of the pod-level 2 cpu that is 40% (ratio 0.8, 2 pods,
    # no change); of the app container's 500m it is 160% (ratio 3.2, wants
    # 7, limited to max(2 × 2, 4) = 4).
    Given the HPA controller runs with:
      | flag          | value                    |
      | feature-gates | PodLevelResources=<gate> |
    And a deployment "web" with pods:
      | pod   | cpu request | pod cpu request |
      | web-0 | 500m        | 2               |
      | web-1 | 500m        | 2               |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 800m and 800m
    When the HPA controller syncs
    Then the deployment "web" has <replicas> replicas
    And the HPA "web" reports cpu utilization <utilization>%

    Examples:
      | gate  | replicas | utilization |
      | true  | 2        | 40          |
      | false | 4        | 160         |
