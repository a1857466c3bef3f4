Feature: HPAConfigurableTolerance is GA and locked from Kubernetes 1.37
  Per-HPA tolerances (behavior.scaleUp.tolerance, behavior.scaleDown.tolerance)
  went GA in 1.37 (k/k #140107): the gate is locked on, and
  kube-controller-manager refuses to start with it turned off, with
  component-base's message. Through 1.36 it is beta and may be turned off,
  and then the per-HPA tolerance is ignored (features/scaling/tolerance.feature).

  @k8s-1.37 @k8s-1.38
  Scenario: Turning the gate off is refused from 1.37
    Then the HPA controller refuses the flag "feature-gates" "HPAConfigurableTolerance=false" saying "cannot set feature gate HPAConfigurableTolerance to false, feature is locked to true"

  @k8s-1.37 @k8s-1.38
  Scenario: Setting the locked gate to its value is accepted, and the per-HPA tolerance applies
    # a ratio of 1.08 is inside the default 10% but outside the HPA's 5%:
    # ceil(1.08 x 10) = 11.
    Given the HPA controller runs with:
      | flag          | value                         |
      | feature-gates | HPAConfigurableTolerance=true |
    And a deployment "web" with 10 pods
    And an HPA "web" for deployment "web" with min 1 and max 20 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 100
    And the HPA "web" has behavior:
      """yaml
      scaleUp: {tolerance: 0.05}
      """
    And the pods of "web" report "http_requests" of 108, 108, 108, 108, 108, 108, 108, 108, 108 and 108
    When the HPA controller syncs
    Then the deployment "web" has 11 replicas

  @k8s-1.36
  Scenario: Under 1.36 the gate may still be turned off
    Given the HPA controller runs with:
      | flag          | value                          |
      | feature-gates | HPAConfigurableTolerance=false |
    And a deployment "web" with 10 pods
    And an HPA "web" for deployment "web" with min 1 and max 20 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 100
    And the HPA "web" has behavior:
      """yaml
      scaleUp: {tolerance: 0.05}
      """
    And the pods of "web" report "http_requests" of 108, 108, 108, 108, 108, 108, 108, 108, 108 and 108
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
