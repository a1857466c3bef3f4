Feature: The ScaledToZero condition decides scaling at zero replicas from Kubernetes 1.36
  With HPAScaleToZero on, 1.36 added the ScaledToZero condition (k/k
  #135118): a scale to zero sets it True, every other rescale False, and
  only a workload the HPA itself scaled to zero is autoscaled from zero; a
  workload a person set to zero replicas stays disabled. Through 1.35 no
  such condition exists: a workload at zero replicas is autoscaled
  whenever minReplicas is 0, whoever set it to zero. Here a queue of 25
  messages against 10 per pod asks for ceil(2.5) = 3 replicas.

  Background:
    Given the HPA controller runs with:
      | flag          | value               |
      | feature-gates | HPAScaleToZero=true |
    And a deployment "worker" with 2 pods
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

  @k8s-1.35
  Scenario: Under 1.35 a workload a person set to zero is scaled up again
    Given the deployment "worker" is scaled to 0 replicas
    And external metric "queue_messages" with selector "" is 25
    When the HPA controller syncs
    Then the deployment "worker" has 3 replicas
    And the HPA "worker" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |

  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: From 1.36 a workload a person set to zero stays disabled
    Given the deployment "worker" is scaled to 0 replicas
    And external metric "queue_messages" with selector "" is 25
    When the HPA controller syncs
    Then the deployment "worker" has 0 replicas
    And the HPA "worker" has condition "ScalingActive" "False" with reason "ScalingDisabled" and message "scaling is disabled since the replica count of the target is zero"

  @k8s-1.35
  Scenario: Under 1.35 the HPA scales to zero and back without a ScaledToZero condition
    Given external metric "queue_messages" with selector "" is 0
    When the HPA controller syncs
    Then the deployment "worker" has 0 replicas
    And the HPA "worker" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
    When external metric "queue_messages" with selector "" is 25
    And 15s pass
    Then the deployment "worker" has 3 replicas

  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: From 1.36 scaling to zero and back goes through the ScaledToZero condition
    Given external metric "queue_messages" with selector "" is 0
    When the HPA controller syncs
    Then the deployment "worker" has 0 replicas
    And the HPA "worker" has condition "ScaledToZero" "True" with reason "ScaledToZero"
    When external metric "queue_messages" with selector "" is 25
    And 15s pass
    Then the deployment "worker" has 3 replicas
    And the HPA "worker" has condition "ScaledToZero" "False" with reason "NotScaledToZero"
