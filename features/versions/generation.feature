Feature: HPAGeneration: generation and observedGeneration from Kubernetes 1.37
  From 1.37 (HPAGeneration, beta and on; GA and locked in 1.38) the API
  server gives an HPA metadata.generation 1 at creation and adds 1 at each
  change of its spec, not of its status (k/k #138228). The controller
  writes the generation it acted on into status.observedGeneration, and
  each condition it sets carries it too (k/k #138653). Through 1.36 there
  is none of it.

  Background:
    Given a deployment "web" with 2 pods
    And the HPA:
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: web}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
        minReplicas: 1
        maxReplicas: 10
        metrics:
        - type: Pods
          pods:
            metric: {name: http_requests}
            target: {type: AverageValue, averageValue: "60"}
      """
    And the pods of "web" report "http_requests" of 50 and 100

  @k8s-1.37 @k8s-1.38
  Scenario: The status tells which spec the controller acted on
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has generation 1 and observed generation 1
    When the HPA "web" has behavior:
      """yaml
      scaleDown: {stabilizationWindowSeconds: 60}
      """
    Then the HPA "web" has generation 2 and observed generation 1
    When the HPA controller syncs
    Then the HPA "web" has generation 2 and observed generation 2
    # Conditions carry the generation at which they were last set: no
    # rescale this time, so ScaledToZero keeps the first one.
    And the HPA "web" has condition "ScalingActive" set at generation 2
    And the HPA "web" has condition "ScaledToZero" set at generation 1

  @k8s-1.36
  Scenario: Under 1.36 HPAs have no generation
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has no generation and no observed generation
    When the HPA "web" has behavior:
      """yaml
      scaleDown: {stabilizationWindowSeconds: 60}
      """
    And the HPA controller syncs
    Then the HPA "web" has no generation and no observed generation
