Feature: An average-value metric at zero replicas reports its total from Kubernetes 1.38
  At zero replicas, an External (or Object) metric with an AverageValue
  target divides the total by the scale's zero status replicas. Through
  1.37 the result is Go's int64(+Inf): the status shows an average of
  -9223372036854775808m (kubernetes#140956, seen by KEDA users). From 1.38
  (k/k #140958) the division is skipped and the status shows the total. The
  replica count is the same in every release.

  Background:
    Given a deployment "batch" with 2 pods
    And the HPA:
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: batch}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: batch}
        minReplicas: 0
        maxReplicas: 5
        metrics:
        - type: External
          external:
            metric: {name: queue_messages}
            target: {type: AverageValue, averageValue: "10"}
        behavior: {scaleDown: {stabilizationWindowSeconds: 0}}
      """
    And external metric "queue_messages" with selector "" is 0
    When the HPA controller syncs
    Then the deployment "batch" has 0 replicas
    When external metric "queue_messages" with selector "" is 25
    And the HPA controller syncs
    Then the deployment "batch" has 3 replicas

  @k8s-1.37
  Scenario: Through 1.37 the status shows the underflow
    Then the HPA "batch" reports "queue_messages" at -9223372036854775808m

  @k8s-1.38
  Scenario: From 1.38 the status shows the total
    Then the HPA "batch" reports "queue_messages" at 25
