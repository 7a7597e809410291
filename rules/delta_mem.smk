# placeholder: rules of delta_mem go here
