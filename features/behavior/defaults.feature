Feature: Behavior defaults
  When spec.behavior is set, the API server fills what it leaves out: a scale-up
  side allows 4 pods or 100% per 15s (the larger) with no stabilization, a
  scale-down side allows 100% per 15s; the scale-down window stays unset and
  the controller then uses its --horizontal-pod-autoscaler-downscale-stabilization.

  Scenario: A behavior with only a scale-down window gets the defaults
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the HPA "web" has behavior:
      """
      scaleDown:
        stabilizationWindowSeconds: 60
      """
    Then the HPA "web" has behavior:
      """
      scaleUp:
        stabilizationWindowSeconds: 0
        selectPolicy: Max
        policies:
        - type: Pods
          value: 4
          periodSeconds: 15
        - type: Percent
          value: 100
          periodSeconds: 15
      scaleDown:
        stabilizationWindowSeconds: 60
        selectPolicy: Max
        policies:
        - type: Percent
          value: 100
          periodSeconds: 15
      """

  Scenario: The default scale-up policies allow the larger of 4 pods and 100% per 15s
    # one pod asks for 10: max(1 + 4, 1 × 2) = 5, then max(5 + 4, 10) = 10.
    Given a deployment "web" with 1 pods
    And an HPA "web" for deployment "web" with min 1 and max 20 replicas
    And the HPA "web" scales on external metric "queue_messages" with selector "" and average value 10
    And the HPA "web" has behavior:
      """
      scaleDown:
        stabilizationWindowSeconds: 60
      """
    And external metric "queue_messages" with selector "" is 100
    When the HPA controller syncs
    Then the deployment "web" has 5 replicas
    And the HPA "web" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"
    When 15s pass
    Then the deployment "web" has 10 replicas
    And the HPA "web" has condition "ScalingLimited" "False" with reason "DesiredWithinRange"
