Feature: From Kubernetes 1.37 a new or changed HPA is synced at once
  Through 1.36 the controller queued a new HPA one sync period away
  (AddRateLimited), and an edit never brought a waiting sync forward. From
  1.37 (k/k #138294) a new HPA is queued at once, and so is a change of its
  spec (a new generation, with HPAGeneration on); status updates still wait.

  Background:
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100

  @k8s-1.37 @k8s-1.38
  Scenario: From 1.37 a new HPA acts within a second
    When 1s passes
    Then the deployment "web" has 3 replicas

  @k8s-1.36
  Scenario: Under 1.36 a new HPA waits a sync period
    When 1s passes
    Then the deployment "web" has 2 replicas
    When 14s pass
    Then the deployment "web" has 3 replicas

  @k8s-1.37 @k8s-1.38
  Scenario: From 1.37 a spec change is acted on at once
    Given the HPA "web" has behavior:
      """yaml
      scaleUp: {selectPolicy: Disabled}
      """
    When 15s pass
    Then the deployment "web" has 2 replicas
    When the HPA "web" has behavior:
      """yaml
      scaleUp: {selectPolicy: Max}
      """
    And 1s passes
    Then the deployment "web" has 3 replicas

  @k8s-1.36
  Scenario: Under 1.36 a spec change waits for the next sync
    Given the HPA "web" has behavior:
      """yaml
      scaleUp: {selectPolicy: Disabled}
      """
    When 15s pass
    Then the deployment "web" has 2 replicas
    When the HPA "web" has behavior:
      """yaml
      scaleUp: {selectPolicy: Max}
      """
    And 1s passes
    Then the deployment "web" has 2 replicas
    When 14s pass
    Then the deployment "web" has 3 replicas
