Feature: HPAScaleToZero is on by default from Kubernetes 1.37
  HPAScaleToZero went to beta, on by default, in 1.37 (k/k #139648): the
  API server accepts minReplicas 0 for an HPA with an Object or External
  metric, and the controller scales such a workload to zero and back
  without any flag. Through 1.36 the gate is alpha and off, and the API
  server refuses minReplicas 0.

  @k8s-1.36
  Scenario: Under 1.36 the API server refuses minReplicas 0
    Then the API server refuses the HPA saying "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1":
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: worker}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
        minReplicas: 0
        maxReplicas: 5
        metrics:
        - type: External
          external:
            metric: {name: queue_messages}
            target: {type: AverageValue, averageValue: "10"}
      """

  @k8s-1.37 @k8s-1.38
  Scenario: From 1.37 an empty queue scales the worker to zero and a full one back, with no flag
    # 0 messages ask for 0 replicas; 25 messages against 10 per pod ask for
    # ceil(2.5) = 3 from zero.
    Given a deployment "worker" with 2 pods
    And the HPA:
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: worker}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
        minReplicas: 0
        maxReplicas: 5
        metrics:
        - type: External
          external:
            metric: {name: queue_messages}
            target: {type: AverageValue, averageValue: "10"}
        behavior: {scaleDown: {stabilizationWindowSeconds: 0}}
      """
    And external metric "queue_messages" with selector "" is 0
    When the HPA controller syncs
    Then the deployment "worker" has 0 replicas
    And the HPA "worker" has condition "ScaledToZero" "True" with reason "ScaledToZero"
    And an event "SuccessfulRescale" with message "New size: 0; reason: All metrics below target" is recorded for the HPA "worker"
    When external metric "queue_messages" with selector "" is 25
    And 15s pass
    Then the deployment "worker" has 3 replicas
    And the HPA "worker" has condition "ScaledToZero" "False" with reason "NotScaledToZero"

  @k8s-1.37 @k8s-1.38
  Scenario: From 1.37 every rescale records ScaledToZero=False, even far from zero
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has condition "ScaledToZero" "False" with reason "NotScaledToZero" and message "the HPA controller did not scale the workload to zero"

  @k8s-1.36
  Scenario: Under 1.36 the same rescale records no ScaledToZero condition
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
