Feature: Scaling up from zero on an average value
  An External metric with an AverageValue target divides by the replicas:
  from zero the ratio is infinite (usage / (target × 0)), as upstream
  computes it, and the controller still scales to ceil(25 / 10) = 3. Issue
  29: drawing this timeline (`explain --plot`, `test --report`) used to spin
  forever; `src/cli/explain.rs` draws it in a test.

  Scenario: An average-value external metric scales a target up from zero
    Given the HPA controller runs with:
      | flag          | value               |
      | feature-gates | HPAScaleToZero=true |
    And a deployment "batch" with 2 pods
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
    And 15s pass
    Then the deployment "batch" has 3 replicas
