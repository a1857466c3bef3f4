Feature: Seed example
  The first worked example of the HPA algorithm. Two pods report 50 and 100
  of a pods metric whose average value target is 60: the average is 75, the
  usage ratio 75 / 60 = 1.25, and the controller asks for ceil(1.25 × 2) = 3
  replicas. README's main job runs this file.

  From Kubernetes 1.37, where HPAScaleToZero is on by default, every
  rescale also records the condition ScaledToZero=False; 1.36 has none.

  @k8s-1.37 @k8s-1.38
  Scenario: Two pods at 50 and 100 against an average value of 60 scale to 3
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" wants 3 replicas
    And the HPA "web" reports "http_requests" at 75
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
      | ScaledToZero   | False  | NotScaledToZero    |
    And an event "SuccessfulRescale" with message "New size: 3; reason: pods metric http_requests above target" is recorded for the HPA "web"

  @k8s-1.36
  Scenario: Under Kubernetes 1.36 the same scale-up records no ScaledToZero condition
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
