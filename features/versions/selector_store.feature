Feature: The selector store of Kubernetes 1.37 keeps the AmbiguousSelector check
  1.37 replaced the HPA controller's selector multimap with a store indexed
  by namespace (HPAOptimizedSelectorStore, beta and on; k/k #139142). It
  answers the same question faster: two HPAs whose selectors select the
  same pods both stop with AmbiguousSelector, in every release.

  # At the target, so that the first sync (before the other HPA has
  # registered its selector) changes nothing either.
  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: Two HPAs selecting the same pods both stop
    Given a deployment "web" with 2 pods
    And an HPA "web-a" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web-a" scales on cpu utilization 50%
    And an HPA "web-b" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web-b" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 500m and 500m
    When 30s pass
    Then the deployment "web" is not rescaled
    And the HPA "web-a" has condition "ScalingActive" "False" with reason "AmbiguousSelector"
    And the HPA "web-b" has condition "ScalingActive" "False" with reason "AmbiguousSelector"
    And an event "AmbiguousSelector" is recorded for the HPA "web-a"
