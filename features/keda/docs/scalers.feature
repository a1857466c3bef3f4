Feature: KEDA's scaler pages, the examples of the modelled triggers
  The ScaledObjects of keda.sh's scaler pages (v2.20) as written. The
  harness stands in for the event source: "the trigger ... reports" is the
  value the scaler would read, so connection settings (hosts, URLs,
  TriggerAuthentication references) are kept as written and not used.
  Expectations follow KEDA v2.20.1's code and the upstream HPA.

  # https://keda.sh/docs/2.20/scalers/rabbitmq-queue/#amqp-protocol
  # The Secret and TriggerAuthentication of the example are left out: the
  # authenticationRef names them, the scripted queue length needs neither.
  Scenario: rabbitmq AMQP example: 50 messages against 20 per pod give 3
    Given a deployment "rabbitmq-deployment" with 1 pod
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: rabbitmq-scaledobject
        namespace: default
      spec:
        scaleTargetRef:
          name: rabbitmq-deployment
        triggers:
        - type: rabbitmq
          metadata:
            protocol: amqp
            queueName: testqueue
            mode: QueueLength
            value: "20"
          authenticationRef:
            name: keda-trigger-auth-rabbitmq-conn
      """
    And the trigger "rabbitmq" of ScaledObject "rabbitmq-scaledobject" reports 50
    When the HPA controller syncs
    Then the HPA "keda-hpa-rabbitmq-scaledobject" has external metric "s0-rabbitmq-testqueue" with selector "scaledobject.keda.sh/name=rabbitmq-scaledobject" and average value 20
    And the deployment "rabbitmq-deployment" has 3 replicas
    And the ScaledObject "rabbitmq-scaledobject" is active

  # https://keda.sh/docs/2.20/scalers/rabbitmq-queue/#trigger-specification
  # value "100.50" and activationValue "10.5"; minReplicaCount is left at
  # its default 0, so activation decides between 0 and 1.
  Scenario: rabbitmq trigger specification: activation above 10.5, target 100.5 per pod
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
            host: amqp://rabbitmq.default:5672/
            protocol: auto
            mode: QueueLength
            value: "100.50"
            activationValue: "10.5"
            queueName: testqueue
            vhostName: /
      """
    And the trigger "rabbitmq" of ScaledObject "worker" reports 10.5
    When the HPA controller syncs
    Then the deployment "worker" has 0 replicas
    And the HPA "keda-hpa-worker" has external metric "s0-rabbitmq-testqueue" with selector "scaledobject.keda.sh/name=worker" and average value 100500m
    When the trigger "rabbitmq" of ScaledObject "worker" reports 11
    And 30s pass
    Then the deployment "worker" has 1 replica
    And the ScaledObject "worker" is active

  # https://keda.sh/docs/2.20/scalers/prometheus/#example
  Scenario: prometheus example: 250 requests per second against 100 give 3
    Given a deployment "my-deployment" with 2 pods
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: prometheus-scaledobject
        namespace: default
      spec:
        scaleTargetRef:
          name: my-deployment
        triggers:
        - type: prometheus
          metadata:
            serverAddress: http://prometheus-host:9090
            threshold: '100'
            query: sum(rate(http_requests_total{deployment="my-deployment"}[2m]))
      """
    And the trigger "prometheus" of ScaledObject "prometheus-scaledobject" reports 250
    When the HPA controller syncs
    Then the HPA "keda-hpa-prometheus-scaledobject" has external metric "s0-prometheus" with selector "scaledobject.keda.sh/name=prometheus-scaledobject" and average value 100
    # 250 over 2 pods is 125 each against 100: ceil(2 × 1.25) = 3.
    And the deployment "my-deployment" has 3 replicas

  # https://keda.sh/docs/2.20/scalers/prometheus/#trigger-specification
  # threshold '100.50' and activationThreshold '5.5': the HPA's target is
  # 100.5, a reading of 5.5 does not activate (not above), 6 does.
  Scenario: prometheus trigger specification: fractional threshold and activation
    Given a deployment "my-deployment" with 1 pod
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: prometheus-scaledobject
      spec:
        scaleTargetRef:
          name: my-deployment
        triggers:
        - type: prometheus
          metadata:
            serverAddress: http://prometheus-host:9090
            query: sum(rate(http_requests_total{deployment="my-deployment"}[2m]))
            threshold: '100.50'
            activationThreshold: '5.5'
      """
    And the trigger "prometheus" of ScaledObject "prometheus-scaledobject" reports 5.5
    When the HPA controller syncs
    Then the HPA "keda-hpa-prometheus-scaledobject" has external metric "s0-prometheus" with selector "scaledobject.keda.sh/name=prometheus-scaledobject" and average value 100500m
    And the deployment "my-deployment" has 0 replicas
    When the trigger "prometheus" of ScaledObject "prometheus-scaledobject" reports 6
    And 30s pass
    Then the deployment "my-deployment" has 1 replica

  # https://keda.sh/docs/2.20/scalers/apache-kafka/#example
  # The page's notice: without allowIdleConsumers KEDA caps the lag at
  # partitions × lagThreshold. The scenario scripts the lag KEDA reports,
  # after that cap (partitions are not modelled).
  Scenario: kafka example: a lag of 120 against 50 gives 3
    Given a deployment "azure-functions-deployment" with 1 pod
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: kafka-scaledobject
        namespace: default
      spec:
        scaleTargetRef:
          name: azure-functions-deployment
        pollingInterval: 30
        triggers:
        - type: kafka
          metadata:
            bootstrapServers: localhost:9092
            consumerGroup: my-group       # Make sure that this consumer group name is the same one as the one that is consuming topics
            topic: test-topic
            # Optional
            lagThreshold: "50"
            offsetResetPolicy: latest
      """
    And the trigger "kafka" of ScaledObject "kafka-scaledobject" reports 120
    When the HPA controller syncs
    Then the HPA "keda-hpa-kafka-scaledobject" has external metric "s0-kafka-test-topic" with selector "scaledobject.keda.sh/name=kafka-scaledobject" and average value 50
    And the deployment "azure-functions-deployment" has 3 replicas

  # https://keda.sh/docs/2.20/scalers/cron/#trigger-specification
  # Inside its window the cron scaler reports desiredReplicas against a
  # target of 1 per pod; the scenario scripts that reading (the window is
  # not evaluated). The HPA gets there at most doubling per sync: 2, 4, 8, 10.
  Scenario: cron trigger specification: 10 desired replicas inside the window
    Given a deployment "worker" with 2 pods
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
        - type: cron
          metadata:
            # Required
            timezone: Asia/Kolkata  # The acceptable values would be a value from the IANA Time Zone Database.
            start: 0 6 * * *        # At 6:00 AM
            end: 0 20 * * *         # At 8:00 PM
            desiredReplicas: "10"
      """
    And the trigger "cron" of ScaledObject "worker" reports 10
    When the HPA controller syncs
    Then the HPA "keda-hpa-worker" has external metric "s0-cron-Asia-Kolkata-06xxx-020xxx" with selector "scaledobject.keda.sh/name=worker" and average value 1
    And the deployment "worker" has 4 replicas
    When 30s pass
    Then the deployment "worker" has 10 replicas

  # https://keda.sh/docs/2.20/scalers/cpu/#example
  # cpu triggers become Resource metrics the HPA reads from metrics.k8s.io.
  # With only cpu/memory triggers KEDA keeps the ScaledObject active: it
  # cannot scale to 0 (the page's notice), although minReplicaCount is 0.
  Scenario: cpu example: a Resource metric, and no scaling to zero
    Given a deployment "my-deployment" with 2 pods
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: cpu-scaledobject
        namespace: default
      spec:
        scaleTargetRef:
          name: my-deployment
        triggers:
        - type: cpu
          metricType: Utilization # Allowed types are 'Utilization' or 'AverageValue'
          metadata:
            value: "50"
      """
    When the HPA controller syncs
    Then the HPA "keda-hpa-cpu-scaledobject" has metrics:
      """
      - type: Resource
        resource:
          name: cpu
          target: {type: Utilization, averageUtilization: 50}
      """
    And the deployment "my-deployment" stays at 2 replicas for 10m
    And the ScaledObject "cpu-scaledobject" is active

  # https://keda.sh/docs/2.20/scalers/cpu/#example, the second example:
  # containerName makes a ContainerResource metric.
  Scenario: cpu example of a specific container: a ContainerResource metric
    Given a deployment "my-deployment" with 2 pods
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: cpu-scaledobject
        namespace: default
      spec:
        scaleTargetRef:
          name: my-deployment
        triggers:
        - type: cpu
          metricType: Utilization # Allowed types are 'Utilization' or 'AverageValue'
          metadata:
            value: "50"
            containerName: "foo"
      """
    When the HPA controller syncs
    Then the HPA "keda-hpa-cpu-scaledobject" has metrics:
      """
      - type: ContainerResource
        containerResource:
          name: cpu
          container: foo
          target: {type: Utilization, averageUtilization: 50}
      """

  # https://keda.sh/docs/2.20/scalers/memory/#example
  Scenario: memory example: a Resource metric on memory utilization
    Given a deployment "my-deployment" with 2 pods
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: memory-scaledobject
        namespace: default
      spec:
        scaleTargetRef:
          name: my-deployment
        triggers:
        - type: memory
          metricType: Utilization # Allowed types are 'Utilization' or 'AverageValue'
          metadata:
            value: "50"
      """
    When the HPA controller syncs
    Then the HPA "keda-hpa-memory-scaledobject" has metrics:
      """
      - type: Resource
        resource:
          name: memory
          target: {type: Utilization, averageUtilization: 50}
      """
    And the ScaledObject "memory-scaledobject" is active

  # https://keda.sh/docs/2.20/scalers/metrics-api/#example
  # "Assuming such response, Metrics API trigger will figure out that current
  # metric value is 12": 12 tasks against 7 per pod give ceil(12 / 7) = 2.
  Scenario: metrics-api example: 12 tasks against 7 give 2
    Given a namespace "keda"
    And a deployment "dummy" with 1 pod
    And the ScaledObject:
      """
      apiVersion: keda.sh/v1alpha1
      kind: ScaledObject
      metadata:
        name: http-scaledobject
        namespace: keda
        labels:
          deploymentName: dummy
      spec:
        maxReplicaCount: 12
        scaleTargetRef:
          name: dummy
        triggers:
          - type: metrics-api
            metadata:
              targetValue: "7"
              url: "http://api:3232/components/stats"
              valueLocation: 'components.worker.tasks'
      """
    And the trigger "metrics-api" of ScaledObject "http-scaledobject" reports 12
    When the HPA controller syncs
    Then the HPA "keda-hpa-http-scaledobject" has external metric "s0-metric-api-components-worker-tasks" with selector "scaledobject.keda.sh/name=http-scaledobject" and average value 7
    And the HPA "keda-hpa-http-scaledobject" has min 1 and max 12 replicas
    And the deployment "dummy" has 2 replicas
