
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-learn/src/api/flat.c" "CMakeFiles/impulse_obj.dir/src/api/flat.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/api/flat.c.o.d"
  "/work/wt-learn/src/core/blas.c" "CMakeFiles/impulse_obj.dir/src/core/blas.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/core/blas.c.o.d"
  "/work/wt-learn/src/core/error.c" "CMakeFiles/impulse_obj.dir/src/core/error.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/core/error.c.o.d"
  "/work/wt-learn/src/core/num.c" "CMakeFiles/impulse_obj.dir/src/core/num.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/core/num.c.o.d"
  "/work/wt-learn/src/core/rng.c" "CMakeFiles/impulse_obj.dir/src/core/rng.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/core/rng.c.o.d"
  "/work/wt-learn/src/eval/cdl_eval.c" "CMakeFiles/impulse_obj.dir/src/eval/cdl_eval.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/eval/cdl_eval.c.o.d"
  "/work/wt-learn/src/eval/chnn_eval.c" "CMakeFiles/impulse_obj.dir/src/eval/chnn_eval.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/eval/chnn_eval.c.o.d"
  "/work/wt-learn/src/eval/chnn_experiment.c" "CMakeFiles/impulse_obj.dir/src/eval/chnn_experiment.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/eval/chnn_experiment.c.o.d"
  "/work/wt-learn/src/impact/drop.c" "CMakeFiles/impulse_obj.dir/src/impact/drop.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/drop.c.o.d"
  "/work/wt-learn/src/impact/drop_process.c" "CMakeFiles/impulse_obj.dir/src/impact/drop_process.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/drop_process.c.o.d"
  "/work/wt-learn/src/impact/drop_set.c" "CMakeFiles/impulse_obj.dir/src/impact/drop_set.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/drop_set.c.o.d"
  "/work/wt-learn/src/impact/gp.c" "CMakeFiles/impulse_obj.dir/src/impact/gp.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/gp.c.o.d"
  "/work/wt-learn/src/impact/gp_fit.c" "CMakeFiles/impulse_obj.dir/src/impact/gp_fit.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/gp_fit.c.o.d"
  "/work/wt-learn/src/impact/impact_contact.c" "CMakeFiles/impulse_obj.dir/src/impact/impact_contact.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/impact_contact.c.o.d"
  "/work/wt-learn/src/impact/impact_ident.c" "CMakeFiles/impulse_obj.dir/src/impact/impact_ident.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/impact_ident.c.o.d"
  "/work/wt-learn/src/impact/impact_irb.c" "CMakeFiles/impulse_obj.dir/src/impact/impact_irb.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/impact_irb.c.o.d"
  "/work/wt-learn/src/impact/impact_mat.c" "CMakeFiles/impulse_obj.dir/src/impact/impact_mat.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/impact_mat.c.o.d"
  "/work/wt-learn/src/impact/impact_models.c" "CMakeFiles/impulse_obj.dir/src/impact/impact_models.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/impact_models.c.o.d"
  "/work/wt-learn/src/impact/impact_npz.c" "CMakeFiles/impulse_obj.dir/src/impact/impact_npz.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/impact_npz.c.o.d"
  "/work/wt-learn/src/impact/impact_reproduce.c" "CMakeFiles/impulse_obj.dir/src/impact/impact_reproduce.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/impact_reproduce.c.o.d"
  "/work/wt-learn/src/impact/impact_routh.c" "CMakeFiles/impulse_obj.dir/src/impact/impact_routh.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/impact_routh.c.o.d"
  "/work/wt-learn/src/impact/impact_set.c" "CMakeFiles/impulse_obj.dir/src/impact/impact_set.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/impact_set.c.o.d"
  "/work/wt-learn/src/impact/learned.c" "CMakeFiles/impulse_obj.dir/src/impact/learned.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/learned.c.o.d"
  "/work/wt-learn/src/impact/learned_curve.c" "CMakeFiles/impulse_obj.dir/src/impact/learned_curve.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/learned_curve.c.o.d"
  "/work/wt-learn/src/impact/learned_io.c" "CMakeFiles/impulse_obj.dir/src/impact/learned_io.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/impact/learned_io.c.o.d"
  "/work/wt-learn/src/integrate/dopri5.c" "CMakeFiles/impulse_obj.dir/src/integrate/dopri5.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/integrate/dopri5.c.o.d"
  "/work/wt-learn/src/integrate/fixed.c" "CMakeFiles/impulse_obj.dir/src/integrate/fixed.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/integrate/fixed.c.o.d"
  "/work/wt-learn/src/integrate/rk_explicit.c" "CMakeFiles/impulse_obj.dir/src/integrate/rk_explicit.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/integrate/rk_explicit.c.o.d"
  "/work/wt-learn/src/io/file.c" "CMakeFiles/impulse_obj.dir/src/io/file.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/io/file.c.o.d"
  "/work/wt-learn/src/io/json.c" "CMakeFiles/impulse_obj.dir/src/io/json.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/io/json.c.o.d"
  "/work/wt-learn/src/io/npy.c" "CMakeFiles/impulse_obj.dir/src/io/npy.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/io/npy.c.o.d"
  "/work/wt-learn/src/io/npz.c" "CMakeFiles/impulse_obj.dir/src/io/npz.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/io/npz.c.o.d"
  "/work/wt-learn/src/models/cdl_structured.c" "CMakeFiles/impulse_obj.dir/src/models/cdl_structured.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/cdl_structured.c.o.d"
  "/work/wt-learn/src/models/chnn.c" "CMakeFiles/impulse_obj.dir/src/models/chnn.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/chnn.c.o.d"
  "/work/wt-learn/src/models/chnn_model.c" "CMakeFiles/impulse_obj.dir/src/models/chnn_model.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/chnn_model.c.o.d"
  "/work/wt-learn/src/models/chnn_system.c" "CMakeFiles/impulse_obj.dir/src/models/chnn_system.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/chnn_system.c.o.d"
  "/work/wt-learn/src/models/contact_estimate.c" "CMakeFiles/impulse_obj.dir/src/models/contact_estimate.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/contact_estimate.c.o.d"
  "/work/wt-learn/src/models/contact_impulse.c" "CMakeFiles/impulse_obj.dir/src/models/contact_impulse.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/contact_impulse.c.o.d"
  "/work/wt-learn/src/models/hnn.c" "CMakeFiles/impulse_obj.dir/src/models/hnn.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/hnn.c.o.d"
  "/work/wt-learn/src/models/massnet.c" "CMakeFiles/impulse_obj.dir/src/models/massnet.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/massnet.c.o.d"
  "/work/wt-learn/src/models/model.c" "CMakeFiles/impulse_obj.dir/src/models/model.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/model.c.o.d"
  "/work/wt-learn/src/models/node.c" "CMakeFiles/impulse_obj.dir/src/models/node.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/node.c.o.d"
  "/work/wt-learn/src/models/resnet.c" "CMakeFiles/impulse_obj.dir/src/models/resnet.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/models/resnet.c.o.d"
  "/work/wt-learn/src/nn/activation.c" "CMakeFiles/impulse_obj.dir/src/nn/activation.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/nn/activation.c.o.d"
  "/work/wt-learn/src/nn/loss.c" "CMakeFiles/impulse_obj.dir/src/nn/loss.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/nn/loss.c.o.d"
  "/work/wt-learn/src/nn/mlp.c" "CMakeFiles/impulse_obj.dir/src/nn/mlp.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/nn/mlp.c.o.d"
  "/work/wt-learn/src/nn/mlp_fused.c" "CMakeFiles/impulse_obj.dir/src/nn/mlp_fused.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/nn/mlp_fused.c.o.d"
  "/work/wt-learn/src/nn/mlp_fused_single.c" "CMakeFiles/impulse_obj.dir/src/nn/mlp_fused_single.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/nn/mlp_fused_single.c.o.d"
  "/work/wt-learn/src/nn/mlp_single.c" "CMakeFiles/impulse_obj.dir/src/nn/mlp_single.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/nn/mlp_single.c.o.d"
  "/work/wt-learn/src/nn/optim.c" "CMakeFiles/impulse_obj.dir/src/nn/optim.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/nn/optim.c.o.d"
  "/work/wt-learn/src/report/figure.c" "CMakeFiles/impulse_obj.dir/src/report/figure.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/report/figure.c.o.d"
  "/work/wt-learn/src/report/python_run.c" "CMakeFiles/impulse_obj.dir/src/report/python_run.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/report/python_run.c.o.d"
  "/work/wt-learn/src/report/table.c" "CMakeFiles/impulse_obj.dir/src/report/table.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/report/table.c.o.d"
  "/work/wt-learn/src/sweep/plan.c" "CMakeFiles/impulse_obj.dir/src/sweep/plan.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/sweep/plan.c.o.d"
  "/work/wt-learn/src/sweep/report.c" "CMakeFiles/impulse_obj.dir/src/sweep/report.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/sweep/report.c.o.d"
  "/work/wt-learn/src/sweep/report_chnn.c" "CMakeFiles/impulse_obj.dir/src/sweep/report_chnn.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/sweep/report_chnn.c.o.d"
  "/work/wt-learn/src/sweep/runner.c" "CMakeFiles/impulse_obj.dir/src/sweep/runner.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/sweep/runner.c.o.d"
  "/work/wt-learn/src/sweep/task_chnn.c" "CMakeFiles/impulse_obj.dir/src/sweep/task_chnn.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/sweep/task_chnn.c.o.d"
  "/work/wt-learn/src/systems/bodies.c" "CMakeFiles/impulse_obj.dir/src/systems/bodies.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/systems/bodies.c.o.d"
  "/work/wt-learn/src/systems/bodies_potential.c" "CMakeFiles/impulse_obj.dir/src/systems/bodies_potential.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/systems/bodies_potential.c.o.d"
  "/work/wt-learn/src/systems/chnn_simulate.c" "CMakeFiles/impulse_obj.dir/src/systems/chnn_simulate.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/systems/chnn_simulate.c.o.d"
  "/work/wt-learn/src/systems/chnn_systems.c" "CMakeFiles/impulse_obj.dir/src/systems/chnn_systems.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/systems/chnn_systems.c.o.d"
  "/work/wt-learn/src/systems/constraints.c" "CMakeFiles/impulse_obj.dir/src/systems/constraints.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/systems/constraints.c.o.d"
  "/work/wt-learn/src/systems/constraints_dynamics.c" "CMakeFiles/impulse_obj.dir/src/systems/constraints_dynamics.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/systems/constraints_dynamics.c.o.d"
  "/work/wt-learn/src/systems/constraints_parse.c" "CMakeFiles/impulse_obj.dir/src/systems/constraints_parse.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/systems/constraints_parse.c.o.d"
  "/work/wt-learn/src/systems/contact_geometry.c" "CMakeFiles/impulse_obj.dir/src/systems/contact_geometry.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/systems/contact_geometry.c.o.d"
  "/work/wt-learn/src/systems/contact_sim.c" "CMakeFiles/impulse_obj.dir/src/systems/contact_sim.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/systems/contact_sim.c.o.d"
  "/work/wt-learn/src/systems/trajset.c" "CMakeFiles/impulse_obj.dir/src/systems/trajset.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/systems/trajset.c.o.d"
  "/work/wt-learn/src/train/cdl_train.c" "CMakeFiles/impulse_obj.dir/src/train/cdl_train.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/train/cdl_train.c.o.d"
  "/work/wt-learn/src/train/chnn_checkpoint.c" "CMakeFiles/impulse_obj.dir/src/train/chnn_checkpoint.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/train/chnn_checkpoint.c.o.d"
  "/work/wt-learn/src/train/chnn_data.c" "CMakeFiles/impulse_obj.dir/src/train/chnn_data.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/train/chnn_data.c.o.d"
  "/work/wt-learn/src/train/chnn_train.c" "CMakeFiles/impulse_obj.dir/src/train/chnn_train.c.o" "gcc" "CMakeFiles/impulse_obj.dir/src/train/chnn_train.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
