Feature: Scale targets and HPA versions
  An HPA can scale anything with a /scale subresource: deployments,
  statefulsets, replicasets. An autoscaling/v1 HPA (cpu only) is the same
  object seen through an older version and behaves the same.

  @k8s-1.36
  Scenario: A statefulset target
    Given a statefulset "db" with 2 pods
    And an HPA "db" for statefulset "db" with min 1 and max 5 replicas
    And the HPA "db" scales on cpu utilization 50%
    And the pods of "db" report "cpu" of 900m and 700m
    When the HPA controller syncs
    Then the statefulset "db" has 4 replicas
    And the HPA "db" reports cpu utilization 80%
    And the HPA "db" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |

  Scenario: A replicaset target
    Given a replicaset "rs" with 2 pods
    And an HPA "rs" for replicaset "rs" with min 1 and max 5 replicas
    And the HPA "rs" scales on pods metric "http_requests" with average value 60
    And the pods of "rs" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the replicaset "rs" has 3 replicas
    And the HPA "rs" has condition "ScalingActive" "True" with reason "ValidMetricFound"

  Scenario: An autoscaling/v1 HPA
    Given a deployment "web" with 2 pods
    And the HPA:
      """
      apiVersion: autoscaling/v1
      kind: HorizontalPodAutoscaler
      metadata:
        name: web
      spec:
        scaleTargetRef:
          apiVersion: apps/v1
          kind: Deployment
          name: web
        minReplicas: 1
        maxReplicas: 10
        targetCPUUtilizationPercentage: 50
      """
    And the pods of "web" report "cpu" of 900m and 700m
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" wants 4 replicas
    And the HPA "web" reports cpu utilization 80%
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"
    And an event "SuccessfulRescale" with message "New size: 4; reason: cpu resource utilization (percentage of request) above target" is recorded for the HPA "web"

  Scenario: A full autoscaling/v2 manifest
    Given a deployment "web" with 2 pods
    And the HPA:
      """
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata:
        name: web
      spec:
        scaleTargetRef:
          apiVersion: apps/v1
          kind: Deployment
          name: web
        minReplicas: 1
        maxReplicas: 10
        metrics:
        - type: Pods
          pods:
            metric:
              name: http_requests
            target:
              type: AverageValue
              averageValue: "60"
        behavior:
          scaleUp:
            policies:
            - type: Pods
              value: 1
              periodSeconds: 60
      """
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" reports "http_requests" at 75
    And the HPA "web" has condition "ScalingLimited" "False" with reason "DesiredWithinRange"
