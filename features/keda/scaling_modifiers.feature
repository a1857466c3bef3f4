Feature: KEDA scalingModifiers: one composite metric from a formula
  With advanced.scalingModifiers the HPA gets one External metric,
  composite-metric, whose target is scalingModifiers.target; KEDA's adapter
  answers the formula over the named triggers, and the ScaledObject is
  active when the formula is above activationTarget.

  Scenario: "(queue + backlog) / 2" over two triggers
    Given a deployment "worker" with 1 pod
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
      spec:
        scaleTargetRef:
          name: worker
        minReplicaCount: 1
        maxReplicaCount: 20
        advanced:
          scalingModifiers:
            formula: "(queue + backlog) / 2"
            target: "10"
            activationTarget: "1"
        triggers:
          - type: rabbitmq
            name: queue
            metadata:
              queueName: orders
              value: "5"
          - type: prometheus
            name: backlog
            metadata:
              serverAddress: http://prometheus:9090
              query: sum(backlog)
              threshold: "5"
      """
    And the trigger "queue" of ScaledObject "worker" reports 50
    And the trigger "backlog" of ScaledObject "worker" reports 30
    When the HPA controller syncs
    Then the HPA "keda-hpa-worker" reports "composite-metric" at 40
    And the deployment "worker" has 4 replicas
    And the ScaledObject "worker" is active
