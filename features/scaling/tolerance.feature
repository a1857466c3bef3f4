Feature: Tolerance
  A usage ratio within [1 - tolerance, 1 + tolerance] changes nothing. The
  cluster-wide --horizontal-pod-autoscaler-tolerance is 0.1; since v1.35
  (HPAConfigurableTolerance, beta and on by default) an HPA may set its own
  behavior.scaleUp.tolerance and behavior.scaleDown.tolerance.

  Background:
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 540m and 540m

  Scenario: A ratio of 1.08 is within the default tolerance
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" wants 2 replicas
    And the HPA "web" reports cpu utilization 54%
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | ReadyForNewScale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
    And the HPA "web" has condition "AbleToScale" "True" with reason "ReadyForNewScale" and message "recommended size matches current size"

  Scenario: A smaller cluster tolerance lets the same load scale up
    Given the HPA controller runs with:
      | flag                                | value |
      | horizontal-pod-autoscaler-tolerance | 0.05  |
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas

  Scenario: A per-HPA scale-up tolerance lets the same load scale up
    Given the HPA "web" has behavior:
      """
      scaleUp:
        tolerance: 0.05
      """
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has condition "ScalingLimited" "False" with reason "DesiredWithinRange"

  @k8s-1.36
  Scenario: With HPAConfigurableTolerance off the per-HPA tolerance is ignored
    Given the HPA controller runs with:
      | flag          | value                          |
      | feature-gates | HPAConfigurableTolerance=false |
    And the HPA "web" has behavior:
      """
      scaleUp:
        tolerance: 0.05
      """
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" wants 2 replicas

  Scenario: A large per-HPA scale-down tolerance keeps a lightly loaded target
    # 4 pods at 300m of 1 cpu: 30%, ratio 0.6, within [1 - 0.5, 1 + 0.1].
    Given a deployment "api" with 4 pods
    And an HPA "api" for deployment "api" with min 1 and max 10 replicas
    And the HPA "api" scales on cpu utilization 50%
    And the HPA "api" has behavior:
      """
      scaleDown:
        tolerance: 0.5
      """
    And the pods of "api" report "cpu" of 300m, 300m, 300m and 300m
    When the HPA controller syncs
    Then the deployment "api" stays at 4 replicas for 10m
    And the HPA "api" wants 4 replicas
    And the HPA "api" has condition "AbleToScale" "True" with reason "ReadyForNewScale"
