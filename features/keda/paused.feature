Feature: A paused ScaledObject stays put
  autoscaling.keda.sh/paused: KEDA stops its scale loop and deletes the
  HPA, whatever the triggers read. autoscaling.keda.sh/paused-replicas: the
  same, after scaling the target to that count.

  Background:
    Given a deployment "worker" with 2 pods

  Scenario: paused: no HPA, no scaling
    Given the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
        annotations:
          autoscaling.keda.sh/paused: "true"
      spec:
        scaleTargetRef:
          name: worker
        minReplicaCount: 0
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "10"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 500
    Then the deployment "worker" stays at 2 replicas for 10m
    And the ScaledObject "worker" has condition "Paused" "True" with reason "ScaledObjectPaused"

  Scenario: paused-replicas: scaled to the count, then kept there
    Given the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
        annotations:
          autoscaling.keda.sh/paused-replicas: "5"
      spec:
        scaleTargetRef:
          name: worker
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "10"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 0
    Then the deployment "worker" stays at 5 replicas for 5m
    And the ScaledObject "worker" has condition "Paused" "True"
