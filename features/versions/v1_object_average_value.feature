Feature: An HPA with an Object AverageValue metric can be written through autoscaling/v1 from Kubernetes 1.36
  Through 1.35 the API server's autoscaling/v1 -> v2 conversion gives an
  Object metric with an AverageValue target v1's targetValue as its value,
  "0" when it has none, and validation refuses it: every update of such an
  HPA through autoscaling/v1 fails, even one that changes nothing
  (kubernetes#87733). 1.36 keeps the target as it is (k/k #137856).

  Background:
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on object metric "requests_per_second" of service "web" with average value 5

  @k8s-1.35
  Scenario: Under 1.35 writing the HPA back through autoscaling/v1 is refused
    Then writing the HPA "web" back through the autoscaling v1 API is refused saying "spec.metrics[0].object.target.value: Invalid value: 0"

  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: From 1.36 the HPA is written back through autoscaling/v1 and still scales on the average
    # 20 requests a second against 5 per pod: ceil(20 / 5) = 4 replicas.
    When the HPA "web" is written back through the autoscaling v1 API
    And object metric "requests_per_second" of service "web" is 20
    And the HPA controller syncs
    Then the deployment "web" has 4 replicas
