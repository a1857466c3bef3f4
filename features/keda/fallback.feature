Feature: KEDA's fallback when a trigger fails
  KEDA counts consecutive failed reads per metric (status.health); once the
  count is above failureThreshold its adapter answers
  target * fallback.replicas, so the HPA computes fallback.replicas. The
  reads before that are errors the HPA reports. A good read resets it.

  Background:
    Given a deployment "worker" with 2 pods

  Scenario: after more than 3 failed reads the HPA scales to fallback.replicas, recovery returns to the metric
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
        maxReplicaCount: 10
        fallback:
          failureThreshold: 3
          replicas: 6
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "20"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 40
    When the HPA controller syncs
    Then the deployment "worker" has 2 replicas
    And the ScaledObject "worker" has condition "Fallback" "False"
    When the trigger "rabbitmq" of ScaledObject "worker" fails
    And 45s pass
    Then the deployment "worker" has 2 replicas
    And the HPA "keda-hpa-worker" has condition "ScalingActive" "False" with reason "FailedGetExternalMetric"
    And the ScaledObject "worker" has condition "Fallback" "False"
    # The 4th failed read is the first above the threshold: the adapter
    # answers 20 * 6 = 120 (60 per pod of 2). The HPA's scale-up limit (twice the replicas,
    # at least 4) takes it to 4 first, to 6 on the next sync.
    When 15s pass
    Then the deployment "worker" has 4 replicas
    And the ScaledObject "worker" has condition "Fallback" "True" with reason "FallbackExists"
    And the HPA "keda-hpa-worker" has condition "ScalingActive" "True"
    And the HPA "keda-hpa-worker" reports "s0-rabbitmq-orders" at 60
    When 15s pass
    Then the deployment "worker" has 6 replicas
    When the trigger "rabbitmq" of ScaledObject "worker" reports 160
    And 15s pass
    Then the deployment "worker" has 8 replicas
    And the ScaledObject "worker" has condition "Fallback" "False" with reason "NoFallbackFound"

  Scenario: currentReplicasIfHigher keeps more replicas than fallback.replicas
    Given the deployment "worker" is scaled to 8 replicas
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
        maxReplicaCount: 10
        fallback:
          failureThreshold: 0
          replicas: 6
          behavior: currentReplicasIfHigher
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "20"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" fails
    When the HPA controller syncs
    Then the deployment "worker" has 8 replicas
    And the ScaledObject "worker" has condition "Fallback" "True"
