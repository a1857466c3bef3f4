Feature: Object metrics of any kind
  The kind in "object metric ... of KIND" is written as in kubectl: a kind
  in any case, a resource, or kind.group. The described object need not
  exist.

  Scenario: A queue length on a deployment, kind in lower case
    Given a deployment "worker" with 1 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 10 replicas
    And the HPA "worker" scales on object metric "qps" of deployment "queue" with value 15
    And object metric "qps" of Deployment "queue" is 30
    When the HPA controller syncs
    Then the deployment "worker" has 2 replicas
    And the HPA "worker" reports "qps" at 30

  Scenario: Requests per second on an Ingress, as in the HPA walkthrough
    Given a deployment "php-apache" with 2 pods
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
        - type: Object
          object:
            metric:
              name: requests-per-second
            describedObject:
              apiVersion: networking.k8s.io/v1
              kind: Ingress
              name: main-route
            target:
              type: Value
              value: 10k
      """
    And object metric "requests-per-second" of ingress "main-route" is 15k
    When the HPA controller syncs
    Then the deployment "php-apache" has 3 replicas
    And the HPA "php-apache" has condition "ScalingActive" "True" with reason "ValidMetricFound"

  Scenario: The kind as a resource or with its group
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on object metric "hits" of ingress.networking.k8s.io "front" with average value 100
    And object metric "hits" of ingresses "front" is 400
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas

