Feature: The HPA of a chart, applied from its rendered manifests
  `Given the manifests in` applies a YAML file or folder, as `helm template`
  or kustomize render it, relative to this file: workloads, HPAs, Services,
  Ingresses, CustomResourceDefinitions and custom resources.

  # The two new pods report nothing: kube-controller-manager's next periodic
  # sync, 15 s of wall clock later, takes them as 0 and goes on to 5, so on
  # a real cluster the Then steps hold only if they come within one period.
  @virtual-clock
  Scenario: A chart's memory HPA scales its deployment
    Given the manifests in "web-chart.yaml"
    And the pods report:
      | pod   | memory     |
      | web-0 | web=256Mi  |
      | web-1 | web=256Mi  |
    When the HPA controller syncs
    # 200% of the 80% target proposes 5; the default scale-up policy allows 4.
    Then the deployment "web" has 4 replicas
    And the HPA "web" reports memory utilization 200%
    And the HPA "web" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"
    And an event "SuccessfulRescale" with message "New size: 4; reason: memory resource utilization (percentage of request) above target" is recorded for the HPA "web"

  Scenario: An HPA scales a custom resource through its scale subresource
    Given a deployment "checkout" with 2 pods
    And the manifests in "rollouts"
    And the HPA:
      ```yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata:
        name: checkout
      spec:
        scaleTargetRef:
          apiVersion: argoproj.io/v1alpha1
          kind: Rollout
          name: checkout
        minReplicas: 1
        maxReplicas: 10
        metrics:
        - type: Pods
          pods:
            metric:
              name: http_requests
            target:
              type: AverageValue
              averageValue: "50"
      ```
    And the pods of "checkout" report "http_requests" of 100 and 100
    When the HPA controller syncs
    Then the HPA "checkout" wants 4 replicas
    And an event "SuccessfulRescale" with message "New size: 4; reason: pods metric http_requests above target" is recorded for the HPA "checkout"

  Scenario: An object metric describes a custom resource
    Given a deployment "checkout" with 2 pods
    And the manifests in "rollouts/crd.yaml"
    And an HPA "checkout" for deployment "checkout" with min 1 and max 10 replicas
    And the HPA "checkout" scales on object metric "queue_depth" of rollout "checkout" with value 10
    And object metric "queue_depth" of rollouts.argoproj.io "checkout" is 20
    When the HPA controller syncs
    Then the deployment "checkout" has 4 replicas
    And the HPA "checkout" reports "queue_depth" at 20
