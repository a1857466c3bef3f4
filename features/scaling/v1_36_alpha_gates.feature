Feature: The v1.36 alpha gates HPASelectionStrategy and HPAExternalMetricFallback
  Both are accepted by --feature-gates and change nothing: v1.36's
  autoscaling/v2 has no spec.selectionStrategy and no external.fallback
  (docs/fidelity.md), so the API server prunes the fields and the
  controller never sees them. An external metric that keeps failing stops
  the HPA, with the gates off or on.

  Scenario Outline: A failing external metric gets no fallback replicas (<gates>)
    Given the HPA controller runs with:
      | flag          | value   |
      | feature-gates | <gates> |
    And a deployment "worker" with 2 pods
    And the HPA:
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata:
        name: worker
      spec:
        scaleTargetRef:
          apiVersion: apps/v1
          kind: Deployment
          name: worker
        minReplicas: 1
        maxReplicas: 10
        selectionStrategy: OwnerReferences
        metrics:
        - type: External
          external:
            metric:
              name: queue_depth
            target:
              type: AverageValue
              averageValue: "10"
            fallback:
              failureDurationSeconds: 180
              replicas: 6
      """
    And external metric "queue_depth" with selector "" is 20
    And the external metrics API fails
    When 5m pass
    Then the deployment "worker" has 2 replicas
    And the deployment "worker" is not rescaled
    And the HPA "worker" has condition "ScalingActive" "False" with reason "FailedGetExternalMetric"
    And an event "FailedGetExternalMetric" is recorded for the HPA "worker"

    Examples:
      | gates                                                      |
      | HPASelectionStrategy=false,HPAExternalMetricFallback=false |
      | HPASelectionStrategy=true,HPAExternalMetricFallback=true   |

  Scenario: With the gates on, the external metric still drives the HPA when it answers
    Given the HPA controller runs with:
      | flag          | value                                                    |
      | feature-gates | HPASelectionStrategy=true,HPAExternalMetricFallback=true |
    And a deployment "worker" with 2 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 10 replicas
    And the HPA "worker" scales on external metric "queue_depth" with selector "" and average value 10
    And external metric "queue_depth" with selector "" is 40
    When the HPA controller syncs
    Then the deployment "worker" has 4 replicas
    And the HPA "worker" has condition "ScalingActive" "True" with reason "ValidMetricFound"
