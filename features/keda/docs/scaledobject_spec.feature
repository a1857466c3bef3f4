Feature: KEDA's ScaledObject specification page, example by example
  The examples of https://keda.sh/docs/2.20/reference/scaledobject-spec/
  with the YAML as the page writes it; placeholders are filled in where a
  value is needed and a trigger is added where the page leaves `triggers`
  open. Expectations follow KEDA v2.20.1's code and the upstream HPA.

  # https://keda.sh/docs/2.20/reference/scaledobject-spec/#overview
  # The overview's annotations are left out: `autoscaling.keda.sh/paused`
  # would pause it (see scaling_deployments.feature); the two ownership
  # annotations change nothing for a new HPA.
  Scenario: the overview's ScaledObject makes the HPA it describes
    Given a deployment "worker" with 2 pods
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
      spec:
        scaleTargetRef:
          apiVersion:    apps/v1
          kind:          Deployment
          name:          worker
        pollingInterval:  30
        cooldownPeriod:   300
        initialCooldownPeriod:  0
        idleReplicaCount: 0
        minReplicaCount:  1
        maxReplicaCount:  100
        fallback:
          failureThreshold: 3
          replicas: 6
          behavior: static
        advanced:
          restoreToOriginalReplicaCount: false
          horizontalPodAutoscalerConfig:
            name: worker-hpa
            behavior:
              scaleDown:
                stabilizationWindowSeconds: 300
                policies:
                - type: Percent
                  value: 100
                  periodSeconds: 15
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "20"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 40
    When the HPA controller syncs
    Then the HPA "worker-hpa" has min 1 and max 100 replicas
    And the HPA "worker-hpa" has external metric "s0-rabbitmq-orders" with selector "scaledobject.keda.sh/name=worker" and average value 20
    And the HPA "worker-hpa" has behavior:
      """
      scaleDown:
        stabilizationWindowSeconds: 300
        selectPolicy: Max
        policies:
        - type: Percent
          value: 100
          periodSeconds: 15
      scaleUp:
        stabilizationWindowSeconds: 0
        selectPolicy: Max
        policies:
        - type: Pods
          value: 4
          periodSeconds: 15
        - type: Percent
          value: 100
          periodSeconds: 15
      """
    And the deployment "worker" has 2 replicas
    And the ScaledObject "worker" has condition "Ready" "True" with reason "ScaledObjectReady"
    And the ScaledObject "worker" has condition "Fallback" "False" with reason "NoFallbackFound"

  # https://keda.sh/docs/2.20/reference/scaledobject-spec/#idlereplicacount
  # "If there's no activity on triggers the target resource is scaled down to
  # idleReplicaCount (0), once there is an activity the target resource is
  # immediately scaled to minReplicaCount (10) and then up to maxReplicaCount
  # (100) as needed."
  Scenario: idleReplicaCount 0 with minReplicaCount 10: idle at 0, active at 10 at once, then the HPA
    Given a deployment "worker" with 10 pods
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
      spec:
        scaleTargetRef:
          name: worker
        idleReplicaCount: 0
        minReplicaCount: 10
        maxReplicaCount: 100
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "5"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 0
    # "The cooldownPeriod only applies after a trigger occurs": never active
    # (and initialCooldownPeriod 0), the first poll goes to idle at once.
    When the HPA controller syncs
    Then the deployment "worker" has 0 replicas
    And the ScaledObject "worker" is not active
    And an event "KEDAScaleTargetDeactivated" is recorded for the ScaledObject "worker"
    When the trigger "rabbitmq" of ScaledObject "worker" reports 1
    And 30s pass
    Then the deployment "worker" has 10 replicas
    And the ScaledObject "worker" is active
    # 100 messages over 10 pods against 5 each: ceil(10 × 100 / (5 × 10)) = 20.
    When the trigger "rabbitmq" of ScaledObject "worker" reports 100
    And 15s pass
    Then the deployment "worker" has 20 replicas

  # https://keda.sh/docs/2.20/reference/scaledobject-spec/#triggers
  # "If our metric is the queue size, the threshold is 5 messages, and the
  # current message count in the queue is 20, HPA will scale the deployment
  # to 20 / 5 = 4 replicas, regardless of the current replica count."
  Scenario: metricType AverageValue: 20 messages against 5 on 3 replicas give 4
    Given a deployment "worker" with 3 pods
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
        triggers:
          - type: rabbitmq
            metricType: AverageValue
            metadata:
              queueName: orders
              value: "5"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 20
    When the HPA controller syncs
    Then the deployment "worker" has 4 replicas

  # https://keda.sh/docs/2.20/reference/scaledobject-spec/#triggers
  # "If our metric is average time in the queue, the threshold is 5
  # milliseconds, and the current average time is 20 milliseconds, HPA will
  # scale the deployment to 3 * 20 / 5 = 12." The HPA computes 12; its
  # scale-up limit without a behavior (twice the replicas, at least 4)
  # allows 6 on the first sync, then 12. maxReplicaCount 12 is filled in so
  # that the unchanged 20 ms stop there, as the page's arithmetic assumes.
  Scenario: metricType Value: 20 against 5 on 3 replicas give 12
    Given a deployment "worker" with 3 pods
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
        maxReplicaCount: 12
        triggers:
          - type: prometheus
            metricType: Value
            metadata:
              serverAddress: http://prometheus.monitoring:9090
              query: avg(queue_time_ms)
              threshold: "5"
      """
    And the trigger "prometheus" of ScaledObject "worker" reports 20
    When the HPA controller syncs
    Then the deployment "worker" has 6 replicas
    And the HPA "keda-hpa-worker" has external metric "s0-prometheus" with selector "scaledobject.keda.sh/name=worker" and value 5
    When 15s pass
    Then the deployment "worker" has 12 replicas

  # https://keda.sh/docs/2.20/reference/scaledobject-spec/#fallback and
  # #static-behavior: "When my Prometheus instance becomes unavailable 3
  # times in a row, KEDA changes the HPA metric to scale the deployment to 6
  # replicas". KEDA acts once the count *passes* the threshold: at the 4th
  # failed read. The adapter answers threshold × 6 = 600, so the HPA wants
  # 6 whatever the replicas; from 3 the scale-up limit (twice) allows 6 at once.
  Scenario Outline: fallback behavior <behavior> with <current> replicas and fallback.replicas <fallback> gives <replicas>
    Given a deployment "worker" with <current> pods
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
        fallback:
          failureThreshold: 3
          replicas: <fallback>
          behavior: <behavior>
        triggers:
          - type: prometheus
            metadata:
              serverAddress: http://prometheus.monitoring:9090
              query: sum(rate(http_requests_total[2m]))
              threshold: "100"
      """
    And the trigger "prometheus" of ScaledObject "worker" fails
    When 45s pass
    Then the deployment "worker" has <current> replicas
    And the ScaledObject "worker" has condition "Fallback" "False"
    When 15s pass
    Then the deployment "worker" has <replicas> replicas
    And the ScaledObject "worker" has condition "Fallback" "True" with reason "FallbackExists"

    # The page's four examples: static 6; currentReplicas at 6; 6 current
    # against fallback 3 with currentReplicasIfHigher; 3 current against
    # fallback 6 with currentReplicasIfLower.
    Examples:
      | behavior                | current | fallback | replicas |
      | static                  | 3       | 6        | 6        |
      | currentReplicas         | 6       | 2        | 6        |
      | currentReplicasIfHigher | 6       | 3        | 6        |
      | currentReplicasIfLower  | 3       | 6        | 3        |

  # https://keda.sh/docs/2.20/reference/scaledobject-spec/#horizontalpodautoscalerconfigname
  Scenario: without horizontalPodAutoscalerConfig.name the HPA is keda-hpa-NAME, with maxReplicaCount defaulting to 100
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
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "20"
      """
    When the HPA controller syncs
    # minReplicaCount omitted (0): the HPA's minReplicas is 1.
    Then the HPA "keda-hpa-worker" has min 1 and max 100 replicas
