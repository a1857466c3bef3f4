Feature: KEDA ScaledObject on a RabbitMQ queue
  KEDA generates the HPA keda-hpa-NAME with one External metric per trigger
  (s0-rabbitmq-QUEUE, target averageValue = the trigger's value) and its
  metrics adapter answers the queue length; the HPA divides it by the pods.

  Background:
    Given a deployment "worker" with 1 pod

  Scenario: 50 messages with value 20 on 1 replica give 3 replicas
    Given the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
      spec:
        scaleTargetRef:
          name: worker
        minReplicaCount: 1
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              mode: QueueLength
              value: "20"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 50
    When the HPA controller syncs
    Then the deployment "worker" has 3 replicas
    And the HPA "keda-hpa-worker" has condition "ScalingActive" "True"
    And the HPA "keda-hpa-worker" reports "s0-rabbitmq-orders" at 50
    And the ScaledObject "worker" is active
    And the ScaledObject "worker" has condition "Ready" "True"
    And an event "ScaledObjectReady" is recorded for the ScaledObject "worker"
