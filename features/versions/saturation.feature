Feature: Replica counts saturate instead of wrapping from Kubernetes 1.38
  Upstream converts replica proposals from float64 to int32 with Go's
  int32(...), which on amd64 turns anything out of range into -2147483648.
  A Pods metric a billion times over its target then proposes a negative
  count, which is a scale-down, held by the stabilization window: the HPA
  does not scale up at all. From 1.38 (k/k #141397) every conversion
  saturates at 2147483647, so the same load scales up to the limits.

  Background:
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 1
    And the pods of "web" report "http_requests" of 2P and 2P

  @k8s-1.36 @k8s-1.37
  Scenario: Through 1.37 a huge load wraps to a negative proposal and nothing scales up
    When the HPA controller syncs
    Then the deployment "web" is not rescaled

  @k8s-1.38
  Scenario: From 1.38 a huge load scales up as far as the limits allow
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"
