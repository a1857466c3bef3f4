Feature: The Kubernetes HPA walkthrough
  The php-apache example of the Kubernetes documentation: one pod requesting
  200m cpu, an HPA at 50% between 1 and 10 replicas. A load generator drives
  the pod to 250%, the HPA grows the deployment to 5 replicas (in two steps,
  because without behavior it at most doubles, to at least 4, per sync); when
  the load stops it waits for the 5-minute stabilization window and goes back
  to 1.

  Scenario: php-apache goes to 5 replicas under load and back to 1 after it
    Given a deployment "php-apache" with pods:
      | pod          | cpu request |
      | php-apache-0 | 200m        |
    And an HPA "php-apache" for deployment "php-apache" with min 1 and max 10 replicas
    And the HPA "php-apache" scales on cpu utilization 50%
    # the load generator starts: 500m of 200m = 250%, ratio 5, wants 5.
    And the pods of "php-apache" report "cpu" of 500m
    When the HPA controller syncs
    Then the deployment "php-apache" has 4 replicas
    And the HPA "php-apache" reports cpu utilization 250%
    And the HPA "php-apache" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"
    And an event "SuccessfulRescale" with message "New size: 4; reason: cpu resource utilization (percentage of request) above target" is recorded for the HPA "php-apache"
    # the three new pods report nothing yet and count as 0 on a scale-up:
    # 500m / 800m = 62%, ratio 1.24, ceil(1.24 × 4) = 5.
    When 15s pass
    Then the deployment "php-apache" has 5 replicas
    And the HPA "php-apache" has condition "ScalingLimited" "False" with reason "DesiredWithinRange"
    # the load spreads over the five pods: 100m each, exactly the target.
    When the pods of "php-apache" report "cpu" of 100m, 100m, 100m, 100m and 100m
    Then the deployment "php-apache" stays at 5 replicas for 2m
    # the load generator stops.
    When the pods of "php-apache" report "cpu" of 0, 0, 0, 0 and 0
    Then the deployment "php-apache" stays at 5 replicas for 4m30s
    And the HPA "php-apache" has condition "AbleToScale" "True" with reason "ScaleDownStabilized"
    When 1m passes
    Then the deployment "php-apache" has 1 replicas
    And the HPA "php-apache" reports cpu utilization 0%
    And the HPA "php-apache" has condition "ScalingLimited" "True" with reason "TooFewReplicas"
    And an event "SuccessfulRescale" with message "New size: 1; reason: All metrics below target" is recorded for the HPA "php-apache"
