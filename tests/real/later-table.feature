Feature: A pod table said after "the new pods of ... report" wins, on a cluster that acts between steps
  Run by tests/new_pods_real.rs against `hpa-harness sim --generated-pod-names`
  (treated as a real cluster: its pods named by its controllers, aliased
  in creation order) with a controller process playing the cluster's own.
  "The new pods of W report" is then also a rule of the fake metrics
  server; a later pod table names two of those pods and must win for them,
  with its sample times, at every later sync.

  Scenario: The table's values stay with the pods it names
    Given a deployment "consumer" with 1 pod
    And the pods of "consumer" report "cpu" of 750m
    And the new pods of "consumer" report "cpu" of 0
    And the HPA:
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata:
        name: consumer
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: consumer}
        minReplicas: 1
        maxReplicas: 5
        metrics:
        - type: Resource
          resource: {name: cpu, target: {type: AverageValue, averageValue: 250m}}
        behavior:
          scaleDown: {stabilizationWindowSeconds: 0}
      """
    # 750m against 250m: 3.
    Then the deployment "consumer" has 3 replicas
    # 376m over 3 pods: 125m against 250m, ratio 0.5: 2.
    When the pods report:
      | pod        | cpu  | timestamp | window |
      | consumer-0 | 188m | 0s        | 0s     |
      | consumer-1 | 188m | 0s        | 0s     |
      | consumer-2 | 0    | 0s        | 0s     |
    Then the deployment "consumer" has 2 replicas
