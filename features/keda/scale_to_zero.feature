Feature: KEDA scales between 0 and 1 itself, the HPA above 1
  With minReplicaCount 0 the HPA's minimum is 1; KEDA's scale loop (every
  pollingInterval) scales to 0 once the triggers have been inactive for
  longer than cooldownPeriod, and back to 1 as soon as a trigger reads
  above its activationValue. From 1 up the HPA decides.

  Background:
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
        minReplicaCount: 0
        maxReplicaCount: 10
        pollingInterval: 30
        cooldownPeriod: 60
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "10"
              activationValue: "2"
      """

  Scenario: an empty queue longer than the cooldown scales to 0, a message brings 1 back at once
    Given the trigger "rabbitmq" of ScaledObject "worker" reports 5
    When the HPA controller syncs
    Then the deployment "worker" has 1 replica
    And the ScaledObject "worker" is active
    When the trigger "rabbitmq" of ScaledObject "worker" reports 0
    And 45s pass
    Then the deployment "worker" has 1 replica
    And the ScaledObject "worker" has condition "Active" "False" with reason "ScalerCooldown"
    When 60s pass
    Then the deployment "worker" has 0 replicas
    And the ScaledObject "worker" has condition "Active" "False" with reason "ScalerNotActive"
    And an event "KEDAScaleTargetDeactivated" is recorded for the ScaledObject "worker"
    And the HPA "keda-hpa-worker" has condition "ScalingActive" "False" with reason "ScalingDisabled"
    When the trigger "rabbitmq" of ScaledObject "worker" reports 2
    And 30s pass
    Then the deployment "worker" has 0 replicas
    When the trigger "rabbitmq" of ScaledObject "worker" reports 35
    And 30s pass
    Then the deployment "worker" has 4 replicas
    And an event "KEDAScaleTargetActivated" is recorded for the ScaledObject "worker"
    And the ScaledObject "worker" is active
