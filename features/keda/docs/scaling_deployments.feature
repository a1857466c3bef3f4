Feature: KEDA's "Scaling Deployments" page, example by example
  The examples of https://keda.sh/docs/2.20/concepts/scaling-deployments/
  (pausing, scaling modifiers, activation and scaling thresholds) with the
  page's YAML, placed in a whole ScaledObject where the page shows a part.
  Expectations follow KEDA v2.20.1's code and the upstream HPA.

  Background:
    Given a deployment "worker" with 3 pods

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#pausing-autoscaling
  # "if both paused and paused-replicas are set, KEDA will scale your current
  # workload to the number specified count in paused-replicas and then pause
  # autoscaling."
  Scenario: paused-replicas "0" with paused "true": scaled to 0, then paused
    Given the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
        annotations:
          autoscaling.keda.sh/paused-replicas: "0"
          autoscaling.keda.sh/paused: "true"
      spec:
        scaleTargetRef:
          name: worker
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "5"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 100
    Then the deployment "worker" stays at 0 replicas for 5m
    And the ScaledObject "worker" has condition "Paused" "True" with reason "ScaledObjectPaused"

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#pausing-autoscaling
  # "The annotation autoscaling.keda.sh/paused will pause scaling immediately
  # and use the current instance count"
  Scenario: paused "true" keeps the current count
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
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "5"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 100
    Then the deployment "worker" stays at 3 replicas for 5m

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#pausing-autoscaling
  # "KEDA will update the generated HPA to disable scale in (via setting the
  # HPA's Scale Down Select Policy to Disabled)"
  Scenario: paused-scale-in disables the HPA's scale down, scale up still works
    Given the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
        annotations:
          autoscaling.keda.sh/paused-scale-in: "true"
      spec:
        scaleTargetRef:
          name: worker
        minReplicaCount: 1
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "5"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 1
    Then the deployment "worker" stays at 3 replicas for 10m
    When the trigger "rabbitmq" of ScaledObject "worker" reports 30
    And 15s pass
    Then the deployment "worker" has 6 replicas

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#pausing-autoscaling
  # "KEDA will update the generated HPA to disable scale out (via setting the
  # HPA's Scale Up Select Policy to Disabled)"
  Scenario: paused-scale-out disables the HPA's scale up
    Given the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
        annotations:
          autoscaling.keda.sh/paused-scale-out: "true"
      spec:
        scaleTargetRef:
          name: worker
        minReplicaCount: 1
        triggers:
          - type: rabbitmq
            metadata:
              queueName: orders
              value: "5"
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 100
    Then the deployment "worker" stays at 3 replicas for 2m
    And the HPA "keda-hpa-worker" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#scaling-modifiers
  # "Example: compose average value", as written. trig_one counts the pods
  # with label pod=workload-test (kubernetes-workload), trig_two reads
  # "tasks" from an API (metrics-api); the scenario scripts both readings.
  # With scalingModifiers KEDA builds the triggers as sources of the formula,
  # so neither needs its own target (value, targetValue).
  Scenario: compose average value: (trig_one + trig_two)/2 with target 2
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
        advanced:
          scalingModifiers:
            formula: "(trig_one + trig_two)/2"
            target: "2"
            activationTarget: "2"
            metricType: "AverageValue"
        triggers:
          - type: kubernetes-workload
            name: trig_one
            metadata:
              podSelector: 'pod=workload-test'
          - type: metrics-api
            name: trig_two
            metadata:
              url: "https://mockbin.org/bin/336a8d99-9e09-4f1f-979d-851a6d1b1423"
              valueLocation: "tasks"
      """
    And the trigger "trig_one" of ScaledObject "worker" reports 4
    And the trigger "trig_two" of ScaledObject "worker" reports 16
    When the HPA controller syncs
    Then the HPA "keda-hpa-worker" has external metric "composite-metric" with selector "scaledobject.keda.sh/name=worker" and average value 2
    # (4 + 16) / 2 = 10, over 3 pods 3.334 each against 2: ceil(10 / 2) = 5.
    And the HPA "keda-hpa-worker" reports "composite-metric" at 3334m
    And the deployment "worker" has 5 replicas
    And the ScaledObject "worker" is active

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#scaling-modifiers
  # "Example: activationTarget": "If the calculated value is <=2, the
  # ScaledObject is not Active and it'll scale to 0 if it's allowed."
  Scenario: activationTarget 2: a composite of exactly 2 is not active and scales to 0
    Given the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
      spec:
        scaleTargetRef:
          name: worker
        minReplicaCount: 0
        cooldownPeriod: 60
        advanced:
          scalingModifiers:
            formula: "(trig_one + trig_two)/2"
            target: "2"
            activationTarget: "2"
        triggers:
          - type: kubernetes-workload
            name: trig_one
            metadata:
              podSelector: 'pod=workload-test'
              value: "1"
          - type: metrics-api
            name: trig_two
            metadata:
              url: "http://api:3232/components/stats"
              valueLocation: "tasks"
              targetValue: "1"
      """
    And the trigger "trig_one" of ScaledObject "worker" reports 1
    And the trigger "trig_two" of ScaledObject "worker" reports 3
    When 2m pass
    Then the deployment "worker" has 0 replicas
    And the ScaledObject "worker" is not active

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#scaling-modifiers
  # "Example: ternary operator": "If metric value of trigger trig_one is more
  # than 2, then return trig_one + trig_two otherwise return 1."
  Scenario Outline: ternary operator: trig_one <one>, trig_two <two> gives <composite>
    # On one pod the HPA's per-pod reading is the composite value itself.
    Given the deployment "worker" is scaled to 1 replica
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
        advanced:
          scalingModifiers:
            formula: "trig_one > 2 ? trig_one + trig_two : 1"
            target: "1"
        triggers:
          - type: prometheus
            name: trig_one
            metadata:
              serverAddress: http://prometheus.monitoring:9090
              query: sum(queue_one)
              threshold: "1"
          - type: prometheus
            name: trig_two
            metadata:
              serverAddress: http://prometheus.monitoring:9090
              query: sum(queue_two)
              threshold: "1"
      """
    And the trigger "trig_one" of ScaledObject "worker" reports <one>
    And the trigger "trig_two" of ScaledObject "worker" reports <two>
    When the HPA controller syncs
    Then the HPA "keda-hpa-worker" reports "composite-metric" at <composite>

    Examples:
      | one | two | composite |
      | 3   | 4   | 7         |
      | 2   | 4   | 1         |

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#scaling-modifiers
  # "Example: nested conditions and operators": "If value of trig_one is less
  # than 2 AND trig_one+trig_two is at least 2 then return 5, if only the
  # first is true return 10, if the first condition is false then return 0."
  Scenario Outline: nested conditions: trig_one <one>, trig_two <two> gives <composite>
    # On one pod the HPA's per-pod reading is the composite value itself.
    Given the deployment "worker" is scaled to 1 replica
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
        advanced:
          scalingModifiers:
            formula: "trig_one < 2 ? trig_one+trig_two >= 2 ? 5 : 10 : 0"
            target: "1"
        triggers:
          - type: prometheus
            name: trig_one
            metadata:
              serverAddress: http://prometheus.monitoring:9090
              query: sum(queue_one)
              threshold: "1"
          - type: prometheus
            name: trig_two
            metadata:
              serverAddress: http://prometheus.monitoring:9090
              query: sum(queue_two)
              threshold: "1"
      """
    And the trigger "trig_one" of ScaledObject "worker" reports <one>
    And the trigger "trig_two" of ScaledObject "worker" reports <two>
    When the HPA controller syncs
    Then the HPA "keda-hpa-worker" reports "composite-metric" at <composite>

    Examples:
      | one | two | composite |
      | 1   | 1   | 5         |
      | 1   | 0   | 10        |
      | 2   | 5   | 0         |

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#scaling-modifiers
  # "Example: count function", formula
  # "count([trig_one,trig_two,trig_three],{#>1}) > 1 ? 5 : 0": not modelled.
  # Our formula language has no arrays or predicates ({#>1}); such a
  # ScaledObject is refused (Ready=False, ScaledObjectCheckFailed) where
  # KEDA would accept it. See docs/keda.md.

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#activating-and-scaling-thresholds
  # "threshold: 10 and activationThreshold: 50, in case of 40 messages the
  # scaler is not active and it'll be scaled to zero even the HPA requires
  # 4 instances."
  Scenario: activationThreshold 50 above threshold 10: 40 messages scale to zero
    Given the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: worker
      spec:
        scaleTargetRef:
          name: worker
        minReplicaCount: 0
        cooldownPeriod: 60
        triggers:
          - type: prometheus
            metadata:
              serverAddress: http://prometheus.monitoring:9090
              query: sum(rabbitmq_queue_messages)
              threshold: "10"
              activationThreshold: "50"
      """
    And the trigger "prometheus" of ScaledObject "worker" reports 40
    # The HPA alone would want ceil(40 / 10) = 4; KEDA's scale loop polls
    # first, finds the trigger inactive (40 is not above 50) and, never
    # active before, scales to 0 at once; the HPA then stands aside.
    When the HPA controller syncs
    Then the deployment "worker" has 0 replicas
    And the ScaledObject "worker" has condition "Active" "False" with reason "ScalerNotActive"
    And the HPA "keda-hpa-worker" has condition "ScalingActive" "False" with reason "ScalingDisabled"

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#activating-and-scaling-thresholds
  # "Activation only occurs when this value is greater than the set value;
  # not greater than or equal to. ie, in the default case:
  # activationThreshold: 0 will only activate when the metric value is 1 or more"
  Scenario: from 0, a reading equal to the activation threshold does not activate, above it does
    Given the deployment "worker" is scaled to 0 replicas
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
        triggers:
          - type: prometheus
            metadata:
              serverAddress: http://prometheus.monitoring:9090
              query: sum(rabbitmq_queue_messages)
              threshold: "10"
      """
    And the trigger "prometheus" of ScaledObject "worker" reports 0
    When 1m passes
    Then the deployment "worker" has 0 replicas
    When the trigger "prometheus" of ScaledObject "worker" reports 1
    And 30s pass
    Then the deployment "worker" has 1 replica
    And an event "KEDAScaleTargetActivated" is recorded for the ScaledObject "worker"

  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#forcing-activation
  # autoscaling.keda.sh/force-activation: not modelled; the annotation is
  # ignored. See docs/keda.md.
  # https://keda.sh/docs/2.20/concepts/scaling-deployments/#excluding-labels-from-being-propagated-to-the-hpa
  # scaledobject.keda.sh/hpa-excluded-labels: not modelled; every label is
  # copied. See docs/keda.md.
