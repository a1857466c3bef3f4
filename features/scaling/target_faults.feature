Feature: Problems with the scale target
  The HPA reads and writes the target's /scale subresource. If it cannot read
  it, AbleToScale is False (FailedGetScale); if it cannot write it, AbleToScale
  is False (FailedUpdateScale) and a FailedRescale warning is recorded; a scale
  without a selector makes the HPA inactive (InvalidSelector).

  Background:
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 900m and 700m

  Scenario: Reading the scale fails
    Given reading the scale of "web" fails
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has conditions:
      | type        | status | reason         |
      | AbleToScale | False  | FailedGetScale |
    And an event "FailedGetScale" is recorded for the HPA "web"

  Scenario: Updating the scale fails
    Given updating the scale of "web" fails
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | False  | FailedUpdateScale  |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
    And an event "FailedRescale" is recorded for the HPA "web"
    And no event "SuccessfulRescale" is recorded for the HPA "web"

  Scenario: A scale without a selector makes the HPA inactive
    Given the scale of "web" reports selector ""
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has conditions:
      | type          | status | reason            |
      | AbleToScale   | True   | SucceededGetScale |
      | ScalingActive | False  | InvalidSelector   |
    And the HPA "web" has condition "ScalingActive" "False" with reason "InvalidSelector" and message "the HPA target's scale is missing a selector"
    And an event "SelectorRequired" is recorded for the HPA "web"
    And an event "FailedComputeMetricsReplicas" is recorded for the HPA "web"
