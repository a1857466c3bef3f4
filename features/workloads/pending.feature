Feature: Pods that never start
  A scale-up beyond the cluster's room leaves pods Pending: unschedulable,
  without a start time. Upstream's replica calculator counts Pending pods as
  unready whatever the metric: as 0 when the ready pods ask for more, left
  out when they ask for less.

  Scenario: Pending pods count as 0 on a scale-up, so the HPA does not run away
    Given a deployment "web" with 2 pods
    And new pods of "web" stay pending
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 800m and 800m
    # 80% of a 1-cpu request: ratio 1.6, ceil(1.6 * 2) = 4.
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And 2 pods of "web" are pending
    # web-2 and web-3 never start. The ready pods still ask for more (1.6),
    # so the pending ones count as 0: 1600m over 4 pods is 40%, ratio 0.8,
    # the other direction: no change.
    And the deployment "web" stays at 4 replicas for 60s
    And the HPA "web" reports cpu utilization 80%
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"
    And the HPA "web" has condition "AbleToScale" "True" with reason "ReadyForNewScale"

  Scenario: Room for some: the HPA scales up again as pods start, and stops short of the pending ones
    Given a deployment "web" with 2 pods
    And new pods of "web" stay pending until 3 are running
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 800m and 800m
    And the new pods of "web" report "cpu" of 800m
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And 1 pod of "web" is pending
    # web-2 runs but its cpu sample only counts a full window (30s) after it
    # became Ready: until then it and the pending web-3 count as 0, 1600m
    # over 4 pods, ratio 0.8: no change.
    And the deployment "web" stays at 4 replicas for 15s
    # Then web-2 counts: 2400m over 3 ready pods, ratio 1.6; web-3 counts as
    # 0: 2400m over 4 pods is 60%, ratio 1.2, ceil(1.2 * 4) = 5.
    When 15s pass
    Then the deployment "web" has 5 replicas
    And 2 pods of "web" are pending
    And an event "SuccessfulRescale" with message "New size: 5; reason: cpu resource utilization (percentage of request) above target" is recorded for the HPA "web"
    # 2400m over 5 pods is 48%, ratio 0.96: within the tolerance.
    And the deployment "web" stays at 5 replicas for 60s

  Scenario: Pending pods are left out of a scale-down
    Given a deployment "web" with 4 pods
    And new pods of "web" stay pending
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the HPA "web" has behavior:
      """
      scaleDown:
        stabilizationWindowSeconds: 0
      """
    When the deployment "web" is scaled to 6 replicas
    Then 2 pods of "web" are pending
    When the pods report:
      | pod   | cpu  |
      | web-0 | 200m |
      | web-1 | 200m |
      | web-2 | 200m |
      | web-3 | 200m |
    # The 4 running pods: 20%, ratio 0.4. The pending ones are left out, not
    # counted at the target: ceil(0.4 * 4) = 2, from 6.
    And the HPA controller syncs
    Then the deployment "web" has 2 replicas
    And 0 pods of "web" are pending
    And an event "SuccessfulRescale" with message "New size: 2; reason: All metrics below target" is recorded for the HPA "web"
