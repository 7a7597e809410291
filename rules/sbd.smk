# placeholder: rules of sbd go here
