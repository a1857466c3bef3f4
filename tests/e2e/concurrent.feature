Feature: Scenarios side by side on a real cluster
  Each scenario runs in a namespace of its own, with its own controller and
  its own metrics in the shared fake metrics server: the same deployment
  name gets each scenario's own replica count. Time passes on the wall
  clock, so each scenario waits a few seconds (a 2s sync period).

  Scenario Outline: web at <a> and <b> against an average of 60 ends at <replicas>
    Given the HPA controller runs with:
      | flag                                  | value |
      | horizontal-pod-autoscaler-sync-period | 2s    |
    And a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of <a> and <b>
    When 4s pass
    Then the deployment "web" has <replicas> replicas

    Examples:
      | a   | b   | replicas |
      | 50  | 100 | 3        |
      | 100 | 100 | 4        |
      | 150 | 150 | 5        |
      | 60  | 60  | 2        |
      | 180 | 180 | 6        |
      | 90  | 90  | 3        |
