Feature: Selectors of the scale target
  The HPA finds its pods through the selector the scale subresource reports.
  A selector that does not parse makes the HPA inactive, and so do pods that
  another HPA also selects (AmbiguousSelector).

  Scenario: A selector that does not parse makes the HPA inactive
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 900m and 700m
    And the scale of "web" reports selector "cheddar cheese"
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has conditions:
      | type          | status | reason            |
      | AbleToScale   | True   | SucceededGetScale |
      | ScalingActive | False  | InvalidSelector   |
    And the HPA "web" has condition "ScalingActive" "False" with reason "InvalidSelector" and message "couldn't convert selector into a corresponding internal selector object: unable to parse requirement: found 'cheese', expected: in, notin, =, ==, !=, gt, lt"
    And an event "InvalidSelector" with message "couldn't convert selector into a corresponding internal selector object: unable to parse requirement: found 'cheese', expected: in, notin, =, ==, !=, gt, lt" is recorded for the HPA "web"
    And an event "FailedComputeMetricsReplicas" is recorded for the HPA "web"

  Scenario: Two HPAs selecting the same pods both stop
    # once both have registered their selectors (after their first syncs),
    # each finds the pods controlled by the other too.
    Given a deployment "web" with 2 pods
    And an HPA "web-a" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web-a" scales on cpu utilization 50%
    And an HPA "web-b" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web-b" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 500m and 500m
    When 30s pass
    Then the deployment "web" is not rescaled
    And the HPA "web-a" has condition "ScalingActive" "False" with reason "AmbiguousSelector"
    And the HPA "web-b" has condition "ScalingActive" "False" with reason "AmbiguousSelector"
    And an event "AmbiguousSelector" is recorded for the HPA "web-a"
    And an event "AmbiguousSelector" is recorded for the HPA "web-b"
