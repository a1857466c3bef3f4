Feature: A custom metrics API that fails and never recovers
  The fault is the shared fake metrics server's: the scenario runs alone,
  and the fault goes when it ends.

  Scenario: The custom metrics API fails for the rest of the scenario
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    And the custom metrics API fails
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has condition "ScalingActive" "False" with reason "FailedGetPodsMetric"
