Feature: Scenarios as users write them
  Steps accept what users write from the Kubernetes documentation: doc
  strings with a media type, pods named as they like, containers without
  requests, and history tables in any order.

  Scenario: A doc string with a media type and its own indentation
    Given a deployment "php-apache" with 1 pods
    And the HPA:
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata:
        name: php-apache
      spec:
        scaleTargetRef:
          apiVersion: apps/v1
          kind: Deployment
          name: php-apache
        minReplicas: 1
        maxReplicas: 10
        metrics:
        - type: Resource
          resource:
            name: cpu
            target:
              type: Utilization
              averageUtilization: 50
      """
    And the HPA "php-apache" has behavior:
      ```yaml
      scaleUp:
        stabilizationWindowSeconds: 0
      ```
    And the pods of "php-apache" report "cpu" of 1500m
    When the HPA controller syncs
    Then the deployment "php-apache" has 3 replicas
    And the HPA "php-apache" reports cpu utilization 150%

  Scenario: Containers named with nothing after = have no request
    Given a deployment "web" with pods:
      | pod   | cpu request     |
      | web-0 | app=, sidecar=  |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 500m
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has condition "ScalingActive" "False" with reason "FailedGetResourceMetric"

  Scenario: What the scale subresource reports is what the deployment has
    Given a deployment "web" with 2 pods
    And the scale of "web" reports 4 spec replicas and 2 status replicas
    Then the deployment "web" has 4 replicas

  @virtual-clock
  Scenario: History tables compare as multisets
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 100
    And the pods of "web" report "http_requests" of 100 and 100
    And the HPA controller's recommendations for "web" were:
      | age | replicas |
      | 1m  | 2        |
      | 2m  | 2        |
      | 3m  | 4        |
    When the HPA controller syncs
    Then the HPA controller's recommendations for "web" are:
      | age | replicas |
      | 0s  | 2        |
      | 1m  | 2        |
      | 3m  | 4        |
      | 2m  | 2        |

  Scenario: Pods are named as the user likes, and metric tables use those names
    Given a deployment "api" with pods:
      | pod        | ready |
      | api-blue   | true  |
      | api-canary | true  |
      | green      | false |
    And an HPA "api" for deployment "api" with min 1 and max 10 replicas
    And the HPA "api" scales on pods metric "http_requests" with average value 10
    And the pods report:
      | pod        | http_requests |
      | api-blue   | 20            |
      | api-canary | 10            |
      | green      | 0             |
    When pod "green" becomes ready
    And the HPA controller syncs
    Then the deployment "api" has 3 replicas
    And the HPA "api" reports "http_requests" at 10

  Scenario: Values in pod order go to the pods in table order
    Given a deployment "api" with pods:
      | pod         |
      | test-pod-1  |
      | test-pod-0  |
    And an HPA "api" for deployment "api" with min 1 and max 10 replicas
    And the HPA "api" scales on pods metric "http_requests" with average value 10
    And the pods of "api" report "http_requests" of 40 and 0
    When pod "test-pod-0" fails
    And the HPA controller syncs
    Then the deployment "api" has 4 replicas

  Scenario: One pod and one replica are written in the singular
    Given a deployment "api" with 1 pod
    And a deployment "batch" with 2 pods
    And an HPA "api" for deployment "api" with min 1 and max 5 replicas
    And the HPA "api" scales on cpu utilization 50%
    # half of the pod's 1-cpu request against 50%: ratio 1.0, no change.
    And the pods of "api" report "cpu" of 500m
    When the HPA controller syncs
    Then the HPA "api" wants 1 replica
    And the deployment "api" stays at 1 replica for 30s
    # all of it: ceil(1 * 2.0) = 2.
    When the pods of "api" report "cpu" of 1
    And the HPA controller syncs
    Then the HPA "api" wants 2 replicas
    And the deployment "api" has 2 replicas
    When the deployment "batch" is scaled to 1 replica
    Then the deployment "batch" has 1 replica
