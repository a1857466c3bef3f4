Feature: The controller's Prometheus metrics
  The controller counts its reconciliations by the action taken (scale_up,
  scale_down, none) and the error class (none, internal, spec), and its metric
  computations by metric type, as kube-controller-manager does.

  Scenario: A scale-up is counted
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the controller metric "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"scale_up\",error=\"none\"}" is 1
    And the controller metric "horizontal_pod_autoscaler_controller_metric_computation_total{action=\"scale_up\",error=\"none\",metric_type=\"Pods\"}" is 1

  Scenario: A failing metrics API is counted as an internal error
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the resource metrics API fails
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the controller metric "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"none\",error=\"internal\"}" is 1
    And the controller metric "horizontal_pod_autoscaler_controller_metric_computation_total{action=\"none\",error=\"internal\",metric_type=\"Resource\"}" is 1
